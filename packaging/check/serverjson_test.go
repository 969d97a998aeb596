package check

// registryName is deskhand's name in the MCP Registry: io.github.<owner>
// names are proven by GitHub sign-in.
const registryName = "io.github.deskhand/deskhand"
