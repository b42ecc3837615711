// Package archtest holds the architecture tests: the rules of
// docs/development.md that the compiler does not check (function length,
// the size of types with behaviour, the storage contract's size, what the
// domain and the extractive summariser may be imported by), run over the
// repository's own source with go/parser, go/build and reflect.
package archtest
