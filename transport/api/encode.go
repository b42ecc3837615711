package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
)

// apiError is the one error shape every failure is rendered in.
type apiError struct {
	status  int
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// retryAfter, when set, becomes a Retry-After header (seconds).
	retryAfter int
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func badRequest(code, field, msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: code, Field: field, Message: msg}
}

// readBody reads the request's body whole, by the request's deadline (a
// client that stalls mid-body holds nothing past server.request_timeout).
// It leaves the body in memory for a second read (bufferBody, decode).
func readBody(c echo.Context) ([]byte, error) {
	if b, ok := c.Request().Body.(*bufferedBody); ok { // read before (bufferBody)
		return b.body, nil
	}
	if dl, ok := c.Request().Context().Deadline(); ok {
		_ = http.NewResponseController(c.Response()).SetReadDeadline(dl)
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("request body exceeds %d bytes (server.body_limit)", mbe.Limit)}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, badRequest("read_failed", "", "the request body did not arrive within server.request_timeout")
		}
		return nil, badRequest("read_failed", "", "could not read the request body: "+err.Error())
	}
	c.Request().Body = &bufferedBody{Reader: bytes.NewReader(body), body: body}
	return body, nil
}

// bufferedBody is a request body read whole, readable again.
type bufferedBody struct {
	*bytes.Reader
	body []byte
}

func (*bufferedBody) Close() error { return nil }

// bufferBody reads the body before what follows it: the read gate
// (admitReads) admits requests whose bodies have arrived, so clients that
// stall mid-body cannot hold its few places.
func bufferBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, err := readBody(c); err != nil {
			return err
		}
		return next(c)
	}
}

// decode reads a JSON body strictly: valid UTF-8, no unknown fields, one
// value, within the body limit.
func decode(c echo.Context, v any) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("empty_body", "", "the request body is empty; send a JSON object")
	}
	if err := jsonContentType(c); err != nil {
		return err
	}
	// encoding/json silently replaces invalid UTF-8, and an escaped half
	// of a surrogate pair ("\udcff"), with U+FFFD; reject them instead so
	// nothing is stored altered (two ids must not become one).
	if !utf8.Valid(body) || loneSurrogate(body) {
		return badRequest("invalid_utf8", "", "the request body is not valid UTF-8 (or escapes half a surrogate pair)")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber() // free-form values (metadata) keep their numbers exactly
	if err := dec.Decode(v); err != nil {
		return jsonError(err, reflect.TypeOf(v).Elem(), body)
	}
	if dec.More() {
		return badRequest("invalid_json", "", "the body holds more than one JSON value")
	}
	return nil
}

// jsonContentType refuses a body declared as anything but JSON with 415
// unsupported_media_type: a web page can POST text/plain, a form or
// multipart to another origin without asking first (a "simple request"),
// never application/json. application/json with any parameters (charset)
// and application/<x>+json are accepted; so is a body with no Content-Type
// (clients other than browsers that do not set one).
func jsonContentType(c echo.Context) error {
	ct := c.Request().Header.Get(echo.HeaderContentType)
	if strings.TrimSpace(ct) == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return &apiError{status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type",
		Message: fmt.Sprintf("the request body is %q; this endpoint takes application/json", ct)}
}

// decodeNone reads the body of an endpoint that takes none: nothing or {}
// is fine; anything else is refused as decode refuses it (an unknown
// field, malformed JSON), rather than ignored.
func decodeNone(c echo.Context) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var none struct{}
	return decode(c, &none)
}

// loneSurrogate reports whether body escapes a UTF-16 surrogate that is
// not half of a high-low pair ("\ud800" alone, "\udcff"), which JSON
// decoders turn into U+FFFD. A body without "\u" is not scanned.
func loneSurrogate(body []byte) bool {
	for i := bytes.Index(body, []byte(`\u`)); i >= 0; {
		if n := precedingBackslashes(body, i); n%2 == 1 { // "\\u": an escaped backslash, then "u"
			i = nextUEscape(body, i+1)
			continue
		}
		r, ok := hex4(body, i+2)
		switch {
		case !ok || r < 0xd800 || r > 0xdfff:
		case r >= 0xdc00: // a low half first
			return true
		default: // a high half: a low half must follow at once
			if lo, ok := hex4(body, i+8); !ok || body[i+6] != '\\' || body[i+7] != 'u' || lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i += 6
		}
		i = nextUEscape(body, i+2)
	}
	return false
}

func nextUEscape(body []byte, from int) int {
	if from >= len(body) {
		return -1
	}
	j := bytes.Index(body[from:], []byte(`\u`))
	if j < 0 {
		return -1
	}
	return from + j
}

// precedingBackslashes counts the backslashes right before body[i] (the
// backslash of "\u" itself not counted: i is its index).
func precedingBackslashes(body []byte, i int) int {
	n := 0
	for j := i - 1; j >= 0 && body[j] == '\\'; j-- {
		n++
	}
	return n
}

// hex4 reads four hex digits at body[i:].
func hex4(body []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(body) {
		return 0, false
	}
	var r rune
	for _, c := range body[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// jsonError says what is wrong with a body the decoder refused, in the
// API's words: a syntax error where it is, else the first value that does
// not fit t, with its field path.
func jsonError(err error, t reflect.Type, body []byte) *apiError {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return badRequest("invalid_json", "", fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, syn.Error()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("invalid_json", "", "malformed JSON: unexpected end of input")
	}
	if e := misfit(t, body); e != nil {
		return e
	}
	// Every decoder error above has a place in the body; this is a
	// safety net that still names no Go type.
	return badRequest("invalid_json", "", "the request body does not fit the endpoint's fields")
}

// encode writes v as JSON with the status, in one write with its
// Content-Length: a context answer is tens of kilobytes, which a streaming
// encoder would send as many chunked writes (a system call each).
func encode(c echo.Context, status int, v any) error {
	buf := answerBufs.Get().(*bytes.Buffer)
	defer putAnswerBuf(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode ends the answer with '\n'
		return fmt.Errorf("encode answer: %w", err)
	}
	return writeJSON(c, status, buf)
}

// encodeAnswer is encode for /v1/context's answer, written by appendAnswer
// (answer.go); encoding/json reports a value appendAnswer refuses.
func encodeAnswer(c echo.Context, a engine.ContextAnswer) error {
	buf := answerBufs.Get().(*bytes.Buffer)
	defer putAnswerBuf(buf)
	buf.Reset()
	if !appendAnswer(buf, &a) {
		return encode(c, http.StatusOK, a)
	}
	return writeJSON(c, http.StatusOK, buf)
}

// writeJSON sends buf, a JSON answer, with the status.
func writeJSON(c echo.Context, status int, buf *bytes.Buffer) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	h.Set(echo.HeaderContentLength, strconv.Itoa(buf.Len()))
	c.Response().WriteHeader(status)
	_, err := c.Response().Write(buf.Bytes())
	return err
}

// answerBufs recycles the buffers answers are encoded into: a context is
// 10-40 KB of JSON, which json.Marshal grew and copied afresh for every
// request.
var answerBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putAnswerBuf returns buf to the pool unless an unusually large answer
// grew it (kept, it would pin that memory).
func putAnswerBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 256<<10 {
		answerBufs.Put(buf)
	}
}

// errorHandler renders every error in the one JSON shape.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		ae := toAPIError(err)
		if ae.status >= 500 && ae.Code != "request_canceled" {
			log.Error("request failed", "request_id", c.Response().Header().Get(echo.HeaderXRequestID), "path", c.Path(), "err", err)
		}
		if ae.retryAfter > 0 {
			c.Response().Header().Set("Retry-After", fmt.Sprint(ae.retryAfter))
		}
		var werr error
		if c.Request().Method == http.MethodHead {
			werr = c.NoContent(ae.status)
		} else {
			werr = c.JSON(ae.status, map[string]any{"error": ae})
		}
		if werr != nil {
			log.Debug("write error response", "err", werr)
		}
	}
}

// fullRetryAfter is the Retry-After (seconds) of a storage_full answer.
const fullRetryAfter = 30

func toAPIError(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	if ee, ok := engine.AsError(err); ok {
		out := &apiError{Code: ee.Code, Message: ee.Message, Field: ee.Field}
		switch ee.Kind {
		case engine.KindInvalid:
			out.status = http.StatusBadRequest
		case engine.KindNotFound:
			out.status = http.StatusNotFound
		case engine.KindTooLarge:
			out.status = http.StatusRequestEntityTooLarge
		case engine.KindConflict:
			out.status = http.StatusConflict
		case engine.KindUnavailable:
			out.status = http.StatusServiceUnavailable
			out.retryAfter = 1
		case engine.KindFull:
			// Space comes back with an operator, not in a second: a
			// client retrying every second would only add load.
			out.status = http.StatusServiceUnavailable
			out.retryAfter = fullRetryAfter
		default:
			out.status = http.StatusInternalServerError
		}
		return out
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && m != "" {
			msg = m
		}
		code := strings.ReplaceAll(strings.ToLower(http.StatusText(he.Code)), " ", "_")
		return &apiError{status: he.Code, Code: code, Message: msg}
	}
	return &apiError{status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}
