// Package check validates deploy/k8s offline: every manifest the
// kustomization lists is decoded strictly (an unknown or misspelled field
// is an error) into the Kubernetes API's own Go types. It is its own
// module so that contextd's go.mod does not carry k8s.io/api.
package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is one decoded manifest.
type Object struct {
	File       string
	APIVersion string
	Kind       string
	Name       string
	Value      any // *appsv1.Deployment, *corev1.Service, ...
}

// types are the kinds the base may hold, by "apiVersion/kind".
var types = map[string]func() any{
	"v1/ConfigMap":                       func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                          func() any { return new(corev1.Secret) },
	"v1/Service":                         func() any { return new(corev1.Service) },
	"apps/v1/Deployment":                 func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                func() any { return new(appsv1.StatefulSet) },
	"batch/v1/Job":                       func() any { return new(batchv1.Job) },
	"policy/v1/PodDisruptionBudget":      func() any { return new(policyv1.PodDisruptionBudget) },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return new(networkingv1.NetworkPolicy) },
}

// Kustomization is the part of kustomization.yaml the base uses; any
// other field is an error (the check could not vouch for it).
type Kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []Image  `json:"images,omitempty"`
}

// Image is a kustomization's image override.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
}

// strict decodes one YAML document into v as the API server's strict
// field validation does: an unknown field, a field given twice or in
// another case ("Replicas") is an error.
func strict(doc []byte, v any) error {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	strictErrs, err := sigsjson.UnmarshalStrict(j, v)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		return errors.Join(strictErrs...)
	}
	return nil
}

// LoadKustomization reads dir/kustomization.yaml strictly.
func LoadKustomization(dir string) (*Kustomization, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k Kustomization
	if err := strict(raw, &k); err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		return nil, fmt.Errorf("kustomization.yaml: %s/%s is not a Kustomization", k.APIVersion, k.Kind)
	}
	return &k, nil
}

// Decode decodes every document of a manifest file strictly into its
// Kubernetes type.
func Decode(file string, raw []byte) ([]Object, error) {
	var out []Object
	for i, doc := range splitDocs(raw) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", file, i+1, err)
		}
		mk, ok := types[head.APIVersion+"/"+head.Kind]
		if !ok {
			return nil, fmt.Errorf("%s document %d: %s %s is not a kind this check knows", file, i+1, head.APIVersion, head.Kind)
		}
		v := mk()
		if err := strict(doc, v); err != nil {
			return nil, fmt.Errorf("%s: %s %q: %w", file, head.Kind, head.Metadata.Name, err)
		}
		if head.Metadata.Name == "" {
			return nil, fmt.Errorf("%s document %d: %s without metadata.name", file, i+1, head.Kind)
		}
		out = append(out, Object{File: file, APIVersion: head.APIVersion, Kind: head.Kind, Name: head.Metadata.Name, Value: v})
	}
	return out, nil
}

// LoadBase decodes every resource the kustomization in dir lists.
func LoadBase(dir string) (*Kustomization, []Object, error) {
	k, err := LoadKustomization(dir)
	if err != nil {
		return nil, nil, err
	}
	var all []Object
	for _, r := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(dir, r))
		if err != nil {
			return nil, nil, err
		}
		objs, err := Decode(r, raw)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, objs...)
	}
	return k, all, nil
}

// splitDocs splits a YAML stream on its "---" lines, dropping documents
// that hold only comments or nothing.
func splitDocs(raw []byte) [][]byte {
	var docs [][]byte
	var cur []string
	flush := func() {
		doc := strings.Join(cur, "\n")
		for _, l := range cur {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, []byte(doc))
				break
			}
		}
		cur = nil
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.TrimRight(l, " ") == "---" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return docs
}
