package meter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Down is an upstream that cannot serve a run: it refused the key (Status
// 401 or 403, or an answer whose error names a bad key), or it could not
// be reached (Status 0). Every later request would fail the same way, so
// eval infer stops the run instead of recording the instance's outcome.
type Down struct {
	URL    string
	Status int    // the answer's status; 0: no answer
	Cause  string // what the upstream said, or why it could not be reached
}

func (d *Down) Error() string {
	if d.Status == 0 {
		return fmt.Sprintf("the upstream %s cannot be reached: %s", d.URL, d.Cause)
	}
	return fmt.Sprintf("the upstream %s refused the key: %d %s: %s", d.URL, d.Status, http.StatusText(d.Status), d.Cause)
}

// verdict is what a model call's answer says of whom to blame.
type verdict int

const (
	// answered: the agent's to judge (a success, or an error that says
	// the request itself was wrong: 400, 413, 422 without a refusal's
	// code).
	answered verdict = iota
	// failedUp: the upstream failed or refused the request (5xx, 429, a
	// provider's refusal): the instance's UpstreamError when it was the
	// agent's last request.
	failedUp
	// keyRefused: the upstream refused the key: the run stops.
	keyRefused
)

// Error codes (the error's type, code, status or reasons, lowercased) by
// which providers say a key is bad, and by which they refuse a request
// that was well formed: policy, quota, billing, region, an unknown
// model, overload. OpenAI, Anthropic and Gemini word them so.
var (
	keyCodes = map[string]bool{
		"invalid_api_key": true, "api_key_invalid": true, "authentication_error": true, "unauthenticated": true,
		"permission_denied": true, "permission_error": true, "invalid_authentication": true, "account_deactivated": true,
	}
	refusalCodes = map[string]bool{
		"content_filter": true, "content_policy_violation": true, "insufficient_quota": true, "billing_hard_limit_reached": true,
		"billing_not_active": true, "rate_limit_exceeded": true, "rate_limit_error": true, "overloaded_error": true,
		"resource_exhausted": true, "failed_precondition": true, "model_not_found": true, "not_found_error": true,
		"unsupported_country_region_territory": true, "api_error": true, "server_error": true, "unavailable": true,
	}
)

// judge is the verdict on a model call's answer: its status, and the
// error codes its body names.
func judge(status int, body []byte) verdict {
	if status < 400 {
		return answered
	}
	codes := errorCodes(body)
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusProxyAuthRequired:
		return keyRefused
	case anyOf(codes, keyCodes):
		return keyRefused // Gemini answers a bad key with 400 API_KEY_INVALID
	case status >= 500:
		return failedUp
	}
	switch status {
	case http.StatusPaymentRequired, http.StatusNotFound, http.StatusRequestTimeout, http.StatusConflict,
		http.StatusTooEarly, http.StatusTooManyRequests, http.StatusUnavailableForLegalReasons:
		return failedUp
	}
	if anyOf(codes, refusalCodes) {
		return failedUp
	}
	return answered
}

func anyOf(codes []string, set map[string]bool) bool {
	for _, c := range codes {
		if set[c] {
			return true
		}
	}
	return false
}

// errorCodes are the codes an error body names, lowercased: OpenAI's
// error.type and error.code, Anthropic's error.type, Gemini's
// error.status and error.details[].reason.
func errorCodes(body []byte) []string {
	var e struct {
		Error struct {
			Type    any    `json:"type"`
			Code    any    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
			Details []struct {
				Reason string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return nil
	}
	var out []string
	for _, v := range []any{e.Error.Type, e.Error.Code, e.Error.Status} {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, strings.ToLower(s))
		}
	}
	for _, d := range e.Error.Details {
		if d.Reason != "" {
			out = append(out, strings.ToLower(d.Reason))
		}
	}
	return out
}

// errorMessage is the message an error body carries, else the body's
// start.
func errorMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// unreachable says whether a request's error means the upstream could
// not be reached at all (no connection, no such host), rather than an
// answer cut or late.
func unreachable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial"
}

// CheckTimeout bounds Check: an upstream that does not answer its models
// list in this time is taken for unreachable.
const CheckTimeout = 5 * time.Second

// Check asks the upstream the cheapest question that needs the key: its
// models list (GET /models of OpenAI's API, /v1/models of Anthropic's,
// /v1beta/models of Gemini's). It returns a *Down when the key is refused
// or the upstream cannot be reached (or does not answer within
// CheckTimeout), and nil for any other answer: an upstream that serves no
// models list (a 404) may still serve model calls, which the meter then
// judges.
func Check(ctx context.Context, up Upstream) error {
	base := strings.TrimRight(up.URL, "/")
	path := "/models"
	switch up.API {
	case "anthropic":
		path = "/v1/models"
	case "gemini":
		path = "/v1beta/models"
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return fmt.Errorf("upstream %q: %w", up.URL, err)
	}
	up.authorize(req)
	if up.API == "anthropic" {
		req.Header.Set("Anthropic-Version", "2023-06-01")
	}
	tr := up.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}).Do(req)
	if err != nil {
		if perr := parent.Err(); perr != nil {
			return perr // interrupted: nothing said of the upstream
		}
		if ctx.Err() != nil {
			return &Down{URL: up.URL, Cause: fmt.Sprintf("GET %s: no answer within %s", path, CheckTimeout)}
		}
		return &Down{URL: up.URL, Cause: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if judge(resp.StatusCode, body) == keyRefused {
		return &Down{URL: up.URL, Status: resp.StatusCode, Cause: "GET " + path + ": " + errorMessage(body)}
	}
	return nil
}

// authorize sets the upstream's key on req, the way its API takes it.
func (up Upstream) authorize(req *http.Request) {
	if up.Key == "" {
		return
	}
	switch up.API {
	case "anthropic":
		req.Header.Set("X-Api-Key", up.Key)
	case "gemini":
		req.Header.Set("X-Goog-Api-Key", up.Key)
	default:
		req.Header.Set("Authorization", "Bearer "+up.Key)
	}
}
