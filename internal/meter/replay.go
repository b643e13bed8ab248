package meter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/featbench/featbench/config"
)

// Replay recomputes the totals of a trajectory from the responses it
// records, as the proxy counted them when they passed: every model
// exchange's usage is read again from its recorded body and must be the
// usage the line states; turns are the model requests forwarded (not
// those a limit refused). With prices, each line's cost must be the
// table's; without (nil), the costs the lines state are summed.
func Replay(r io.Reader, prices map[string]config.Price) (Totals, error) {
	var tot Totals
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 4*MaxRecord)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ex struct {
			Exchange
			Request  json.RawMessage `json:"request"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(line, &ex); err != nil {
			return tot, fmt.Errorf("line %d: %w", n, err)
		}
		if ex.Kind == Other {
			continue
		}
		if ex.Limit != "" {
			tot.Limit = ex.Limit
			continue
		}
		tot.Turns++
		var body []byte
		stream := false
		if len(ex.Response) > 0 && ex.Response[0] == '"' {
			var s string
			if err := json.Unmarshal(ex.Response, &s); err != nil {
				return tot, fmt.Errorf("line %d: field \"response\": %w", n, err)
			}
			body, stream = []byte(s), true
		} else {
			body = ex.Response
		}
		u, _, ok := ParseUsage(body, stream)
		if ex.Truncated {
			// The body was cut: its usage was read as it streamed.
			if ex.Usage != nil {
				u, ok = *ex.Usage, true
			}
		}
		switch {
		case ok && ex.Usage == nil:
			return tot, fmt.Errorf("line %d: the response reports usage %+v but the line states none", n, u)
		case !ok && ex.Usage != nil:
			return tot, fmt.Errorf("line %d: the line states usage %+v but the response reports none", n, *ex.Usage)
		case ok && u != *ex.Usage:
			return tot, fmt.Errorf("line %d: the response reports usage %+v but the line states %+v", n, u, *ex.Usage)
		}
		if !ok {
			continue
		}
		tot.Usage.Add(u)
		tot.TokensIn += u.In()
		tot.TokensOut += u.Output
		if prices == nil {
			if ex.Unpriced {
				if !slices.Contains(tot.Unpriced, ex.Model) {
					tot.Unpriced = append(tot.Unpriced, ex.Model)
				}
			} else {
				tot.Cost += ex.Cost
			}
			continue
		}
		if p, ok := lookupPrice(prices, ex.Model); ok {
			c := Cost(p, u)
			if math.Abs(c-ex.Cost) > 1e-9 {
				return tot, fmt.Errorf("line %d: %s's usage costs %v at the price table's rates, but the line states %v", n, ex.Model, c, ex.Cost)
			}
			tot.Cost += c
		} else if !slices.Contains(tot.Unpriced, ex.Model) {
			tot.Unpriced = append(tot.Unpriced, ex.Model)
		}
	}
	if err := sc.Err(); err != nil {
		return tot, fmt.Errorf("reading the trajectory: %w", err)
	}
	return tot, nil
}
