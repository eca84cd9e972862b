// Command helm-render renders a Helm chart directory the way `helm template` does, for machines
// without a helm binary: Go text/template with the sprig functions plus Helm's include, tpl,
// required, toYaml/fromYaml/toJson/fromJson, and the built-in objects .Values, .Release, .Chart,
// .Capabilities, .Template and .Files. Values files given with -f are deep-merged over the chart's
// values.yaml in order (a null removes a key), numbers behave as in Helm (float64), and every
// rendered document must parse as YAML. Output is multi-document YAML with `# Source:` comments.
// `lookup` finds nothing, as in `helm template`, unless -lookup names a YAML file of objects that
// stand for the cluster's (an upgrade, say).
//
// Usage: helm-render [-f values.yaml]... [-name RELEASE] [-namespace NS] [-kube-version V] [-lookup objects.yaml] CHART_DIR
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/semver"
	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var valueFiles, apiVersions listFlag
	flag.Var(&valueFiles, "f", "values file merged over the chart's values.yaml (repeatable; later files win)")
	name := flag.String("name", "release", "release name (.Release.Name)")
	namespace := flag.String("namespace", "default", "release namespace (.Release.Namespace)")
	kubeVersion := flag.String("kube-version", "v1.30.0", "Kubernetes version for .Capabilities and the chart's kubeVersion")
	flag.Var(&apiVersions, "api-versions", "extra API version for .Capabilities.APIVersions (repeatable)")
	lookupFile := flag.String("lookup", "", "multi-document YAML of objects that `lookup` finds, as if they were in the cluster")
	flag.Parse()
	if *lookupFile != "" {
		if err := loadClusterObjects(*lookupFile); err != nil {
			fmt.Fprintln(os.Stderr, "Error:", err)
			os.Exit(1)
		}
	}
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: helm-render [-f values.yaml]... [-name N] [-namespace NS] CHART_DIR")
		os.Exit(2)
	}
	out, err := render(flag.Arg(0), valueFiles, *name, *namespace, *kubeVersion, apiVersions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
	os.Stdout.WriteString(out)
}

// Capabilities mirrors the parts of Helm's .Capabilities that charts commonly use.
type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions APIVersions
}

type KubeVersion struct{ Version, Major, Minor, GitVersion string }

func (k KubeVersion) String() string { return k.Version }

type APIVersions []string

func (a APIVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

// Files is a minimal .Files: Get returns a chart file's contents ("" when absent).
type Files map[string][]byte

func (f Files) Get(name string) string { return string(f[name]) }

var defaultAPIVersions = []string{
	"v1", "apps/v1", "batch/v1", "autoscaling/v1", "autoscaling/v2", "policy/v1",
	"networking.k8s.io/v1", "rbac.authorization.k8s.io/v1", "storage.k8s.io/v1",
	"apiextensions.k8s.io/v1", "admissionregistration.k8s.io/v1", "coordination.k8s.io/v1",
}

func render(dir string, valueFiles []string, name, namespace, kubeVersion string, extraAPIs []string) (string, error) {
	meta, err := readYAMLMap(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", err
	}
	chartName, _ := meta["name"].(string)
	if chartName == "" {
		return "", errors.New("Chart.yaml: name is required")
	}
	kv, err := semver.NewVersion(kubeVersion)
	if err != nil {
		return "", fmt.Errorf("-kube-version: %w", err)
	}
	if c, ok := meta["kubeVersion"].(string); ok && c != "" {
		constraint, err := semver.NewConstraint(c)
		if err != nil {
			return "", fmt.Errorf("Chart.yaml kubeVersion: %w", err)
		}
		if !constraint.Check(kv) {
			return "", fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", c, kubeVersion)
		}
	}

	values, err := readYAMLMap(filepath.Join(dir, "values.yaml"))
	if err != nil {
		return "", err
	}
	for _, f := range valueFiles {
		override, err := readYAMLMap(f)
		if err != nil {
			return "", err
		}
		values = mergeValues(values, override)
	}

	sources, files, err := loadChartFiles(dir, chartName)
	if err != nil {
		return "", err
	}

	var root *template.Template
	root = template.New(chartName).Option("missingkey=zero").Funcs(funcMap(&root))
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := root.New(n).Parse(sources[n]); err != nil {
			return "", err
		}
	}

	top := map[string]interface{}{
		"Values": values,
		"Chart":  chartObject(meta),
		"Release": map[string]interface{}{
			"Name": name, "Namespace": namespace, "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Capabilities": Capabilities{
			KubeVersion: KubeVersion{Version: kv.Original(), GitVersion: kv.Original(),
				Major: fmt.Sprint(kv.Major()), Minor: fmt.Sprint(kv.Minor())},
			APIVersions: append(APIVersions(defaultAPIVersions), extraAPIs...),
		},
		"Files": files,
	}

	var out strings.Builder
	for _, n := range names {
		base := path.Base(n)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" {
			continue
		}
		data := make(map[string]interface{}, len(top)+1)
		for k, v := range top {
			data[k] = v
		}
		data["Template"] = map[string]interface{}{"Name": n, "BasePath": chartName + "/templates"}
		var buf strings.Builder
		if err := root.ExecuteTemplate(&buf, n, data); err != nil {
			return "", err
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		for _, doc := range docSeparator.Split(text, -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var probe interface{}
			if err := yaml.Unmarshal([]byte(doc), &probe); err != nil {
				return "", fmt.Errorf("YAML parse error on %s: %w", n, err)
			}
			fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", n, strings.Trim(doc, "\n"))
		}
	}
	return out.String(), nil
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*(?:#.*)?$`)

// loadChartFiles returns the templates (named "<chart>/templates/<path>", as Helm names them)
// and every other chart file for .Files.
func loadChartFiles(dir, chartName string) (map[string]string, Files, error) {
	sources := map[string]string{}
	files := Files{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasPrefix(rel, "templates/") {
			sources[chartName+"/"+rel] = string(b)
		} else {
			files[rel] = b
		}
		return nil
	})
	return sources, files, err
}

// chartObject maps Chart.yaml keys to Helm's field names (name -> Name, apiVersion -> APIVersion).
func chartObject(meta map[string]interface{}) map[string]interface{} {
	c := map[string]interface{}{}
	for k, v := range meta {
		if k == "apiVersion" {
			c["APIVersion"] = v
		} else if k != "" {
			c[strings.ToUpper(k[:1])+k[1:]] = v
		}
	}
	return c
}

func funcMap(root **template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env") // Helm removes these so renders do not depend on the machine
	delete(f, "expandenv")
	depth := 0
	f["include"] = func(name string, data interface{}) (string, error) {
		if depth > 1000 {
			return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
		}
		depth++
		defer func() { depth-- }()
		var buf strings.Builder
		err := (*root).ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := (*root).Clone()
		if err != nil {
			return "", err
		}
		if t, err = t.New("tpl").Parse(text); err != nil {
			return "", fmt.Errorf("tpl: %w", err)
		}
		var buf strings.Builder
		if err := t.Execute(&buf, data); err != nil {
			return "", fmt.Errorf("tpl: %w", err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if s, ok := v.(string); v == nil || (ok && s == "") {
			return v, errors.New(msg)
		}
		return v, nil
	}
	f["toYaml"] = func(v interface{}) string {
		s, err := toYAML(v)
		if err != nil {
			return "" // Helm's toYaml also swallows errors
		}
		return strings.TrimSuffix(s, "\n")
	}
	f["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := decodeYAML([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	f["fromYamlArray"] = func(s string) []interface{} {
		var a []interface{}
		if err := decodeYAML([]byte(s), &a); err != nil {
			a = []interface{}{err.Error()}
		}
		return a
	}
	f["toJson"] = func(v interface{}) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	f["fromJson"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	f["lookup"] = func(apiVersion, kind, namespace, name string) map[string]interface{} {
		for _, o := range clusterObjects {
			meta, _ := o["metadata"].(map[string]interface{})
			// An object given without a namespace is found in any.
			ns, _ := meta["namespace"].(string)
			if o["apiVersion"] == apiVersion && o["kind"] == kind && meta != nil && meta["name"] == name && (ns == namespace || ns == "" || namespace == "") {
				return o
			}
		}
		return map[string]interface{}{} // as in `helm template`: nothing there
	}
	return f
}

// clusterObjects are what `lookup` finds (-lookup); none by default, as in `helm template`.
var clusterObjects []map[string]interface{}

func loadClusterObjects(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc interface{}
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", file, err)
		}
		j, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		o := map[string]interface{}{}
		if err := json.Unmarshal(j, &o); err != nil {
			return fmt.Errorf("%s: each document must be an object: %w", file, err)
		}
		clusterObjects = append(clusterObjects, o)
	}
}

// decodeYAML parses YAML into out through JSON, as Helm (sigs.k8s.io/yaml) does, so numbers are
// float64 and maps are map[string]interface{}.
func decodeYAML(b []byte, out interface{}) error {
	var v interface{}
	if err := yaml.Unmarshal(b, &v); err != nil {
		return err
	}
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(j, out)
}

// toYAML marshals through JSON, as Helm does (sorted keys, integral numbers without exponents),
// and lets the emitter pick each scalar's quoting.
func toYAML(v interface{}) (string, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(j, &n); err != nil {
		return "", err
	}
	resetStyle(&n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return "", err
	}
	return buf.String(), enc.Close()
}

func resetStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		resetStyle(c)
	}
}

func readYAMLMap(file string) (map[string]interface{}, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := decodeYAML(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if m == nil { // an empty file, or one holding only null
		m = map[string]interface{}{}
	}
	return m, nil
}

// mergeValues deep-merges src over dst like Helm's values coalescing: maps merge key by key,
// anything else replaces, and a null deletes the key.
func mergeValues(dst, src map[string]interface{}) map[string]interface{} {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sm, ok := v.(map[string]interface{}); ok {
			if dm, ok := dst[k].(map[string]interface{}); ok {
				dst[k] = mergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}
