package config

import (
	"net/url"
	"strconv"
	"strings"
)

// Telemetry is OpenTelemetry tracing (the telemetry: section): off unless
// an OTLP endpoint is set, here or in the standard OTEL_* variables.
type Telemetry struct {
	// OTLPEndpoint is the collector's base URL ("" = tracing off unless
	// the environment names one). HTTP sends to <endpoint>/v1/traces.
	OTLPEndpoint string
	// OTLPTracesEndpoint is OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, the full
	// traces URL; it has no key in the file.
	OTLPTracesEndpoint string
	OTLPProtocol       string  // http/protobuf (default) | grpc
	SampleRatio        float64 // share of new traces kept, 0..1; default 1
	// QueueSize is OTEL_BSP_MAX_QUEUE_SIZE: spans held for export at
	// most (0: the SDK's 2048); it has no key in the file.
	QueueSize int
}

// Enabled reports whether traces are exported.
func (t Telemetry) Enabled() bool { return t.OTLPEndpoint != "" || t.OTLPTracesEndpoint != "" }

// OTLPProtocols are the exporter protocols contextd speaks.
var OTLPProtocols = []string{"http/protobuf", "grpc"}

// The standard OpenTelemetry variables contextd reads (through getenv, like
// every other variable). The exporter itself still reads the rest of
// OTEL_EXPORTER_OTLP_* (headers, timeout, certificates, compression).
const (
	EnvOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvOTLPProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvOTLPTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvTracesSampler      = "OTEL_TRACES_SAMPLER"
	EnvTracesSamplerArg   = "OTEL_TRACES_SAMPLER_ARG"
	EnvTracesExporter     = "OTEL_TRACES_EXPORTER"
	EnvSDKDisabled        = "OTEL_SDK_DISABLED"
	EnvBSPMaxQueueSize    = "OTEL_BSP_MAX_QUEUE_SIZE"
)

func (d *decoder) telemetryFields(t *Telemetry) fields {
	return fields{
		"otlp_endpoint": d.url(&t.OTLPEndpoint),
		"otlp_protocol": d.enum(&t.OTLPProtocol, OTLPProtocols...),
		"sample_ratio":  d.float(&t.SampleRatio, 0, 1),
	}
}

// telemetryEnv fills what the file left unset or empty from the standard
// OTEL_* variables: explicit configuration wins over the environment, as in
// the OpenTelemetry SDKs. OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none
// turn tracing off whatever the file says.
func (d *decoder) telemetryEnv(t *Telemetry) {
	if strings.EqualFold(d.getenv(EnvSDKDisabled), "true") || strings.EqualFold(d.getenv(EnvTracesExporter), "none") {
		*t = Telemetry{OTLPProtocol: t.OTLPProtocol, SampleRatio: t.SampleRatio}
		return
	}
	if exp := d.getenv(EnvTracesExporter); exp != "" && !strings.EqualFold(exp, "otlp") {
		d.fail(nil, "telemetry", "%s from the environment must be otlp or none, got %q", EnvTracesExporter, exp)
	}
	if t.OTLPEndpoint == "" {
		t.OTLPEndpoint = d.envURL(EnvOTLPEndpoint)
		t.OTLPTracesEndpoint = d.envURL(EnvOTLPTracesEndpoint)
	}
	if !d.has("telemetry.otlp_protocol") {
		for _, name := range []string{EnvOTLPTracesProtocol, EnvOTLPProtocol} {
			if v := d.getenv(name); v != "" {
				d.envProtocol(name, v, t)
				break
			}
		}
	}
	if !d.has("telemetry.sample_ratio") {
		d.envSampler(t)
	}
	if v := d.getenv(EnvBSPMaxQueueSize); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			d.fail(nil, "telemetry", "%s from the environment must be a positive number of spans", EnvBSPMaxQueueSize)
		}
		t.QueueSize = max(n, 0)
	}
}

// envURL reads an endpoint variable; a bad one is an error naming it.
func (d *decoder) envURL(name string) string {
	v := strings.TrimSpace(d.getenv(name))
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.fail(nil, "telemetry.otlp_endpoint", "%s from the environment must be an http:// or https:// URL", name)
		return ""
	}
	return v
}

func (d *decoder) envProtocol(name, v string, t *Telemetry) {
	for _, p := range OTLPProtocols {
		if v == p {
			t.OTLPProtocol = p
			return
		}
	}
	d.fail(nil, "telemetry.otlp_protocol", "%s from the environment must be http/protobuf or grpc, got %q", name, v)
}

// envSampler maps OTEL_TRACES_SAMPLER (+_ARG) onto the parent-based ratio
// contextd always uses.
func (d *decoder) envSampler(t *Telemetry) {
	switch s := d.getenv(EnvTracesSampler); s {
	case "":
	case "always_on", "parentbased_always_on":
		t.SampleRatio = 1
	case "always_off", "parentbased_always_off":
		t.SampleRatio = 0
	case "traceidratio", "parentbased_traceidratio":
		arg := d.getenv(EnvTracesSamplerArg)
		if arg == "" {
			t.SampleRatio = 1 // the specification's default argument
			return
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(arg), 64)
		if err != nil || r < 0 || r > 1 {
			d.fail(nil, "telemetry.sample_ratio", "%s from the environment must be a number between 0 and 1, got %q", EnvTracesSamplerArg, arg)
			return
		}
		t.SampleRatio = r
	default:
		d.fail(nil, "telemetry.sample_ratio", "%s from the environment must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, got %q", EnvTracesSampler, s)
	}
}
