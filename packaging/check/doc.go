// Package check holds the tests that check deskhand's packages and
// deployment recipes against the formats their consumers document: the
// .mcpb bundle (through the official mcpb CLI), the npm packages (packed
// and installed from local tarballs, then run through a real MCP client),
// the MCP Registry's server.json schema, the client config snippets and
// the Kubernetes manifests (decoded strictly into the Kubernetes API
// types). It is a module of its own so that these checkers' dependencies
// stay out of deskhand's.
package check
