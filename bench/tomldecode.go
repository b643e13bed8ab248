package bench

import "github.com/featbench/featbench/internal/tomlstrict"

// keyLines maps a key's path to the line where it is written.
type keyLines = tomlstrict.Lines

// decodeTOML decodes one of the data's TOML files into v strictly (see
// tomlstrict.Decode). reserved maps top-level keys the model leaves out on
// purpose to the message a submitter gets for writing them.
func decodeTOML(file string, data []byte, v any, reserved map[string]string) (keyLines, Problems) {
	return tomlstrict.Decode(file, data, v, tomlstrict.Options{Reserved: reserved, KeysDoc: "CONTRIBUTING.md"})
}
