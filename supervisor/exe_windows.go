package supervisor

// exeSuffix ends the name of every program on Windows.
const exeSuffix = ".exe"
