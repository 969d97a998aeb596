package check

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// registryName is deskhand's name in the MCP Registry: io.github.<owner>
// names are proven by GitHub sign-in.
const registryName = "io.github.deskhand/deskhand"

// pinnedSchemas maps each server.json schema URL to the pinned copy of
// it (see packaging/registry/README.md).
var pinnedSchemas = map[string]string{
	"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json": "server.schema.2025-12-11.json",
}

// serverJSONSchema compiles the schema a server.json names in $schema
// from its pinned copy, asserting formats (uri and the like) as the
// registry does.
func serverJSONSchema(t *testing.T, doc map[string]any) *jsonschema.Schema {
	t.Helper()
	url, _ := doc["$schema"].(string)
	file, ok := pinnedSchemas[url]
	if !ok {
		t.Fatalf("$schema %q is not a pinned schema (have %v): pin the new schema in packaging/registry", url, pinnedSchemas)
	}
	f, err := os.Open(filepath.Join(repoRoot(t), "packaging", "registry", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	schemaDoc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("parsing %s: %v", file, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, schemaDoc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("compiling %s: %v", file, err)
	}
	return sch
}

func loadJSONDoc(t *testing.T, path string) map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		t.Fatalf("%s is not a JSON object", path)
	}
	return m
}

// TestServerJSONSchema: the committed server.json is valid against the
// published schema it names, and the checker is real: an entry with a
// version range, an unknown transport or a too-long description is
// refused.
func TestServerJSONSchema(t *testing.T) {
	path := filepath.Join(repoRoot(t), "packaging", "registry", "server.json")
	doc := loadJSONDoc(t, path)
	sch := serverJSONSchema(t, doc)
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("%s does not match its schema: %v", path, err)
	}
	checkRegistryRules(t, doc)

	bad := []struct {
		name   string
		change func(map[string]any)
	}{
		{"package version latest", func(d map[string]any) { pkg(d, 0)["version"] = "latest" }},
		{"unknown transport", func(d map[string]any) { pkg(d, 0)["transport"] = map[string]any{"type": "carrier-pigeon"} }},
		{"description over 100 characters", func(d map[string]any) { d["description"] = strings.Repeat("x", 101) }},
		{"name without a namespace", func(d map[string]any) { d["name"] = "deskhand" }},
		{"package without identifier", func(d map[string]any) { delete(pkg(d, 0), "identifier") }},
	}
	for _, b := range bad {
		d := loadJSONDoc(t, path)
		b.change(d)
		if err := sch.Validate(d); err == nil {
			t.Errorf("the schema accepted server.json with %s", b.name)
		}
	}
}

// TestServerJSONBuilt: the server.json `make package` writes, which adds
// the .mcpb bundle, is valid too, and its SHA-256 is the bundle's.
func TestServerJSONBuilt(t *testing.T) {
	d := dist(t)
	doc := loadJSONDoc(t, filepath.Join(d, "server.json"))
	if err := serverJSONSchema(t, doc).Validate(doc); err != nil {
		t.Fatalf("dist/server.json does not match its schema: %v", err)
	}
	checkRegistryRules(t, doc)
	var found bool
	for i := range doc["packages"].([]any) {
		p := pkg(doc, i)
		if p["registryType"] != "mcpb" {
			continue
		}
		found = true
		id := p["identifier"].(string)
		data, err := os.ReadFile(filepath.Join(d, filepath.Base(id)))
		if err != nil {
			t.Fatalf("the mcpb package %s is not in %s: %v", id, d, err)
		}
		sum := sha256.Sum256(data)
		if got := p["fileSha256"]; got != hex.EncodeToString(sum[:]) {
			t.Errorf("mcpb fileSha256 %v, but the bundle's is %x", got, sum)
		}
	}
	if !found {
		t.Error("dist/server.json has no mcpb package")
	}
}

// checkRegistryRules checks what the registry checks beyond the schema
// when it publishes an npm package: the package's mcpName is the server's
// name, and versions agree.
func checkRegistryRules(t *testing.T, doc map[string]any) {
	t.Helper()
	v := version(t)
	if doc["name"] != registryName || doc["version"] != v {
		t.Errorf("server.json is %v@%v, want %s@%s", doc["name"], doc["version"], registryName, v)
	}
	var npm struct {
		Name    string
		Version string
		MCPName string `json:"mcpName"`
	}
	readJSON(t, filepath.Join(repoRoot(t), "packaging", "npm", "deskhand", "package.json"), &npm)
	for i := range doc["packages"].([]any) {
		p := pkg(doc, i)
		if p["version"] != v {
			t.Errorf("package %v has version %v, want %s", p["identifier"], p["version"], v)
		}
		if p["registryType"] == "npm" {
			if p["identifier"] != npm.Name || npm.MCPName != doc["name"] || npm.Version != v {
				t.Errorf("npm package %v: packaging/npm/deskhand is %s@%s with mcpName %q; want %v@%s with mcpName %v",
					p["identifier"], npm.Name, npm.Version, npm.MCPName, p["identifier"], v, doc["name"])
			}
		}
	}
}

func pkg(doc map[string]any, i int) map[string]any {
	return doc["packages"].([]any)[i].(map[string]any)
}
