package geometry

import (
	"fmt"
	"slices"
	"strings"
)

// A Preset is a model family's documented image limits, as Limits.
type Preset struct {
	Name   string
	Limits Limits
	// Source says where the limits come from.
	Source string
}

// Presets are the image presets --image-preset names, one per model
// family. Each keeps screenshots within what the family's vision encoder
// takes without resizing them again, so the coordinates the model reads
// off the image are the ones deskhand converts.
var Presets = []Preset{
	{
		Name:   "anthropic",
		Limits: Limits{MaxLongEdge: 1568, MaxTokens: 1568, TokenPx: 28},
		Source: "Anthropic's vision guide: images whose long edge is over 1568 px, or over about 1,600 tokens (w·h/750, about 1.15 megapixels), are scaled down first",
	},
	{
		Name:   "openai",
		Limits: Limits{MaxLongEdge: 2048, MaxTokens: 1536, TokenPx: 32},
		Source: "OpenAI's vision guide: images are fit within 2048×2048, and patch-based models cover them with at most 1536 patches of 32×32 px",
	},
	{
		Name:   "gemini",
		Limits: Limits{MaxLongEdge: 1536, MaxTokens: 4, TokenPx: 768},
		Source: "Gemini's token guide: larger images are cut into 768×768 tiles of 258 tokens each; the preset allows 2×2 tiles (1,032 tokens)",
	},
}

// PresetNames lists the presets' names.
func PresetNames() []string {
	out := make([]string, len(Presets))
	for i, p := range Presets {
		out[i] = p.Name
	}
	return out
}

// LookupPreset returns the preset called name (case does not matter).
func LookupPreset(name string) (Preset, error) {
	i := slices.IndexFunc(Presets, func(p Preset) bool { return strings.EqualFold(p.Name, strings.TrimSpace(name)) })
	if i < 0 {
		return Preset{}, fmt.Errorf("unknown image preset %q: use one of %s", name, strings.Join(PresetNames(), ", "))
	}
	return Presets[i], nil
}
