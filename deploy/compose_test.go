package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string            `yaml:"context"`
		Dockerfile string            `yaml:"dockerfile"`
		Args       map[string]string `yaml:"args"`
	} `yaml:"build"`
	Environment map[string]string `yaml:"environment"`
	Ports       []string          `yaml:"ports"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// docker-compose.yml keeps what it promises: Qdrant pinned, behind an API
// key contextd is given, published on the loopback at most; the image
// built with its VERSION; a healthcheck the distroless image can run.
func TestCompose(t *testing.T) {
	raw, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]composeService `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	q, ok := c.Services["qdrant"]
	if !ok {
		t.Fatal("no qdrant service")
	}
	if !regexp.MustCompile(`^qdrant/qdrant:v1\.(1[6-9]|[2-9][0-9])\.\d+$`).MatchString(q.Image) {
		t.Errorf("qdrant image %q: pin a v1.16+ release tag", q.Image)
	}
	for _, p := range q.Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("qdrant publishes %q beyond the loopback", p)
		}
	}
	keyRef := regexp.MustCompile(`^\$\{QDRANT_API_KEY(:\?[^}]*)?\}$`)
	if !keyRef.MatchString(q.Environment["QDRANT__SERVICE__API_KEY"]) {
		t.Errorf("qdrant's QDRANT__SERVICE__API_KEY = %q, want ${QDRANT_API_KEY:?...}", q.Environment["QDRANT__SERVICE__API_KEY"])
	}

	cd, ok := c.Services["contextd"]
	if !ok {
		t.Fatal("no contextd service")
	}
	if !keyRef.MatchString(cd.Environment["QDRANT_API_KEY"]) {
		t.Errorf("contextd's QDRANT_API_KEY = %q, want Qdrant's key", cd.Environment["QDRANT_API_KEY"])
	}
	profile, err := os.ReadFile("agents.compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\s+api_key: \$\{QDRANT_API_KEY`).Match(profile) {
		t.Error("agents.compose.yaml does not give Qdrant's client ${QDRANT_API_KEY}")
	}
	if cd.Build == nil || cd.Build.Dockerfile != "deploy/Dockerfile" || !strings.HasPrefix(cd.Build.Args["VERSION"], "${VERSION") {
		t.Errorf("contextd's build does not pass VERSION: %+v", cd.Build)
	}
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), "ARG VERSION") || !strings.Contains(string(dockerfile), "-X main.version=${VERSION}") {
		t.Error("the Dockerfile does not build with its VERSION argument")
	}
	if cd.Healthcheck == nil || len(cd.Healthcheck.Test) < 3 || cd.Healthcheck.Test[0] != "CMD" || cd.Healthcheck.Test[1] != "/app/contextd" || cd.Healthcheck.Test[2] != "healthcheck" {
		t.Errorf("contextd's healthcheck %+v: want [CMD /app/contextd healthcheck ...] (the image has no shell)", cd.Healthcheck)
	}
	if !strings.Contains(string(dockerfile), "COPY --from=build /out/contextd /app/contextd") {
		t.Error("the Dockerfile no longer installs the binary at /app/contextd, which the healthcheck runs")
	}
	if slices.ContainsFunc(c.Services["postgres"].Ports, func(p string) bool { return !strings.HasPrefix(p, "127.0.0.1:") }) {
		t.Error("postgres is published beyond the loopback")
	}
}
