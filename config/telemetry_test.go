package config

import (
	"strings"
	"testing"
)

func TestTelemetry(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  []string
		want Telemetry
	}{
		{"off by default", "", nil, Telemetry{OTLPProtocol: "http/protobuf", SampleRatio: 1}},
		{"file", "telemetry:\n  otlp_endpoint: http://collector:4318\n  otlp_protocol: grpc\n  sample_ratio: 0.25\n", nil,
			Telemetry{OTLPEndpoint: "http://collector:4318", OTLPProtocol: "grpc", SampleRatio: 0.25}},
		{"environment", "", []string{EnvOTLPEndpoint, "http://c:4317", EnvOTLPProtocol, "grpc", EnvTracesSampler, "parentbased_traceidratio", EnvTracesSamplerArg, "0.1", EnvBSPMaxQueueSize, "64"},
			Telemetry{OTLPEndpoint: "http://c:4317", OTLPProtocol: "grpc", SampleRatio: 0.1, QueueSize: 64}},
		{"traces variables win over the generic ones", "", []string{EnvOTLPTracesEndpoint, "http://c:4318/custom", EnvOTLPProtocol, "grpc", EnvOTLPTracesProtocol, "http/protobuf"},
			Telemetry{OTLPTracesEndpoint: "http://c:4318/custom", OTLPProtocol: "http/protobuf", SampleRatio: 1}},
		{"the file wins over the environment", "telemetry:\n  otlp_endpoint: http://file:4318\n  otlp_protocol: http/protobuf\n  sample_ratio: 0.5\n",
			[]string{EnvOTLPEndpoint, "http://env:4317", EnvOTLPProtocol, "grpc", EnvTracesSampler, "always_off"},
			Telemetry{OTLPEndpoint: "http://file:4318", OTLPProtocol: "http/protobuf", SampleRatio: 0.5}},
		{"an empty endpoint in the file lets the environment in", "telemetry:\n  otlp_endpoint: \"\"\n", []string{EnvOTLPEndpoint, "http://env:4318"},
			Telemetry{OTLPEndpoint: "http://env:4318", OTLPProtocol: "http/protobuf", SampleRatio: 1}},
		{"OTEL_SDK_DISABLED", "telemetry:\n  otlp_endpoint: http://file:4318\n", []string{EnvSDKDisabled, "true", EnvOTLPEndpoint, "http://env:4318"},
			Telemetry{OTLPProtocol: "http/protobuf", SampleRatio: 1}},
		{"OTEL_TRACES_EXPORTER=none", "", []string{EnvTracesExporter, "none", EnvOTLPEndpoint, "http://env:4318"},
			Telemetry{OTLPProtocol: "http/protobuf", SampleRatio: 1}},
		{"always_off sampler", "", []string{EnvTracesSampler, "always_off"}, Telemetry{OTLPProtocol: "http/protobuf", SampleRatio: 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.src, env(tc.env...))
			if c.Telemetry != tc.want {
				t.Errorf("telemetry = %+v, want %+v", c.Telemetry, tc.want)
			}
			if c.Telemetry.Enabled() != (tc.want.OTLPEndpoint != "" || tc.want.OTLPTracesEndpoint != "") {
				t.Errorf("Enabled() = %v", c.Telemetry.Enabled())
			}
		})
	}
}

func TestTelemetryErrors(t *testing.T) {
	tests := []struct {
		name       string
		src        string
		env        []string
		path, want string
	}{
		{"endpoint without scheme", "telemetry:\n  otlp_endpoint: collector:4318\n", nil, "telemetry.otlp_endpoint", "http:// or https:// URL"},
		{"protocol", "telemetry:\n  otlp_protocol: http/json\n", nil, "telemetry.otlp_protocol", `"http/protobuf", "grpc"`},
		{"ratio above 1", "telemetry:\n  sample_ratio: 2\n", nil, "telemetry.sample_ratio", "between 0 and 1"},
		{"unknown key", "telemetry:\n  endpoint: x\n", nil, "telemetry.endpoint", "unknown key"},
		{"env endpoint", "", []string{EnvOTLPEndpoint, "collector:4318"}, "telemetry.otlp_endpoint", EnvOTLPEndpoint},
		{"env protocol", "", []string{EnvOTLPProtocol, "http/json"}, "telemetry.otlp_protocol", EnvOTLPProtocol},
		{"env sampler", "", []string{EnvTracesSampler, "jaeger_remote"}, "telemetry.sample_ratio", EnvTracesSampler},
		{"env sampler arg", "", []string{EnvTracesSampler, "traceidratio", EnvTracesSamplerArg, "1.5"}, "telemetry.sample_ratio", EnvTracesSamplerArg},
		{"env exporter", "", []string{EnvTracesExporter, "zipkin"}, "telemetry", EnvTracesExporter},
		{"env queue", "", []string{EnvBSPMaxQueueSize, "0"}, "telemetry", EnvBSPMaxQueueSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), env(tc.env...))
			if err == nil {
				t.Fatal("want an error")
			}
			for _, p := range problems(t, err) {
				if p.Path == tc.path && strings.Contains(p.Message, tc.want) {
					return
				}
			}
			t.Errorf("want a problem at %s containing %q, got:\n%v", tc.path, tc.want, err)
		})
	}
}
