package engine

import (
	"errors"
	"fmt"
)

// Error is a client-facing failure: the API maps Kind to a status code and
// shows Code, Message and Field as the contract's error shape.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Field   string
	Err     error
}

// Kind classifies an Error for the transport.
type Kind int

const (
	KindInvalid     Kind = iota + 1 // 400/422: the request is wrong
	KindNotFound                    // 404
	KindTooLarge                    // 413
	KindConflict                    // 409
	KindUnavailable                 // 503: a backend is down; retry
	KindFull                        // 503: the store's disk is full; retry later
)

func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

func invalid(field, code, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

func tooLarge(field, format string, args ...any) *Error {
	return &Error{Kind: KindTooLarge, Code: "too_large", Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound(what string) *Error {
	return &Error{Kind: KindNotFound, Code: "not_found", Message: what + " not found"}
}

func unavailable(what string, err error) *Error {
	return &Error{Kind: KindUnavailable, Code: "backend_unavailable", Message: what + " is unavailable", Err: err}
}

// AsError returns err as an *Error when it is one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
