package catalog

import "testing"

func BenchmarkClassifyUnknown(b *testing.B) {
	id := Identity{Instance: "zenity", Class: "Zenity", Exe: "zenity", Name: "Zenity"}
	for b.Loop() {
		Classify(id)
	}
}

func BenchmarkClassifyKnown(b *testing.B) {
	id := Identity{Instance: "xterm", Class: "XTerm", Exe: "xterm"}
	for b.Loop() {
		Classify(id)
	}
}
