package facts

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestZZTry(t *testing.T) {
	for _, s := range strings.Split(os.Getenv("ZZS"), "|") {
		fmt.Printf("%q\n  => %+v\n", s, DetectUpdates(s, 5))
	}
}
