"""The Qt 5 app of TestElementsQt: a button, a line edit, a check box and a
slider, and a label the button's click rewrites, which the test reads back
through the accessibility tree. Run with Debian's /usr/bin/python3 (it has
python3-pyqt5)."""

import sys

from PyQt5.QtCore import Qt
from PyQt5.QtWidgets import (QApplication, QCheckBox, QLabel, QLineEdit,
                             QPushButton, QSlider, QVBoxLayout, QWidget)

app = QApplication(["deskhand-qt"] + sys.argv[1:])
app.setApplicationName("deskhand-qt")
win = QWidget()
win.setWindowTitle("deskhand qt")
layout = QVBoxLayout(win)
button = QPushButton("Press me")
name = QLineEdit()
name.setAccessibleName("Your name")
agree = QCheckBox("I agree")
level = QSlider(Qt.Horizontal)
level.setRange(0, 100)
level.setValue(10)
level.setAccessibleName("Level")
out = QLabel("not pressed")
presses = 0


def pressed():
    global presses
    presses += 1
    out.setText("pressed %d times, name %s" % (presses, name.text()))


button.clicked.connect(pressed)
for w in (button, name, agree, level, out):
    layout.addWidget(w)
win.resize(400, 260)
win.show()
sys.exit(app.exec_())
