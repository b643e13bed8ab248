package bench

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"path/filepath"
	"regexp"
	"strings"
)

// Logo is an organisation's logo, data/logos/<key>.png or .jpg, key being
// OrgKey of the organisation's name. Only PNG and JPEG are taken, checked
// by their first bytes and decoded whole: an SVG could carry script.
type Logo struct {
	Path   string // the file under data/
	Ext    string // "png" or "jpg"
	Width  int    // in pixels
	Height int
	Data   []byte // the image as validated: published as is, never read again
}

// OrgKey is the key of an organisation's logo: its name lowercased, with
// every run of characters other than a-z and 0-9 turned into one '-', and
// no '-' at either end. "Google DeepMind" is "google-deepmind". A name
// without any such character has the key "", and no logo.
func OrgKey(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

var logoName = regexp.MustCompile(`^([a-z0-9]+(?:-[a-z0-9]+)*)\.(png|jpg)$`)

// The first bytes of a PNG and of a JPEG file.
const (
	pngMagic  = "\x89PNG\r\n\x1a\n"
	jpegMagic = "\xff\xd8\xff"
)

// loadLogos validates the files of data/logos/; orgs are the OrgKeys of
// the organisations the submissions name.
func loadLogos(files []*entry, orgs map[string]bool) (map[string]Logo, Problems) {
	var ps Problems
	logos := map[string]Logo{}
	for _, e := range files {
		m := logoName.FindStringSubmatch(e.name)
		if m == nil {
			ps.Add(e.path, 0, "", "a logo is <key>.png or <key>.jpg, the key being the organisation's name lowercased with every run of other characters than a-z and 0-9 turned into '-' (Google DeepMind: google-deepmind.png)")
			continue
		}
		key, ext := m[1], m[2]
		if prev, dup := logos[key]; dup {
			ps.Add(e.path, 0, "", "%s is the logo of %q too: keep one", filepath.Base(prev.Path), key)
			continue
		}
		if !orgs[key] {
			ps.Add(e.path, 0, "", "no submission names an organisation whose key is %q", key)
			continue
		}
		raw, err := readFile(e.path, maxLogoFile, nil)
		if err != nil {
			ps = append(ps, readProblem(e.path, err))
			continue
		}
		logo, msg := decodeLogo(raw, ext)
		if msg != "" {
			ps.Add(e.path, 0, "", "%s", msg)
			continue
		}
		logo.Path, logo.Data = e.path, raw
		logos[key] = logo
	}
	return logos, ps
}

// decodeLogo checks a logo's bytes against its extension and decodes it.
func decodeLogo(raw []byte, ext string) (Logo, string) {
	var cfg func([]byte) (image.Config, error)
	var dec func([]byte) error
	switch {
	case ext == "png" && bytes.HasPrefix(raw, []byte(pngMagic)):
		cfg = func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) }
		dec = func(b []byte) error { _, err := png.Decode(bytes.NewReader(b)); return err }
	case ext == "jpg" && bytes.HasPrefix(raw, []byte(jpegMagic)):
		cfg = func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) }
		dec = func(b []byte) error { _, err := jpeg.Decode(bytes.NewReader(b)); return err }
	case ext == "png":
		return Logo{}, "is not a PNG image (a logo is a PNG or JPEG image)"
	default:
		return Logo{}, "is not a JPEG image (a logo is a PNG or JPEG image)"
	}
	c, err := cfg(raw)
	if err != nil {
		return Logo{}, fmt.Sprintf("is not a valid image: %v", err)
	}
	if c.Width < 1 || c.Height < 1 || c.Width > maxLogoSide || c.Height > maxLogoSide {
		return Logo{}, fmt.Sprintf("is %d×%d pixels; at most %d×%d", c.Width, c.Height, maxLogoSide, maxLogoSide)
	}
	// Checked before decoding whole, so that decoding allocates at most
	// a 512×512 image.
	if err := dec(raw); err != nil {
		return Logo{}, fmt.Sprintf("is not a valid image: %v", err)
	}
	return Logo{Ext: ext, Width: c.Width, Height: c.Height}, ""
}
