{{/* Chart name, truncated to the 63 characters a DNS label allows. */}}
{{- define "dispatch.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full resource name: "<release>-<chart>", or the release name when it already has the chart's. */}}
{{- define "dispatch.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The headless Service's name, kept within 63 characters. */}}
{{- define "dispatch.headlessName" -}}
{{- printf "%s-headless" (include "dispatch.fullname" . | trunc 54 | trimSuffix "-") -}}
{{- end -}}

{{- define "dispatch.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dispatch.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "dispatch.labels" -}}
{{- include "dispatch.componentLabels" (dict "root" . "selector" (include "dispatch.selectorLabels" .) "version" (.Values.image.tag | default .Chart.AppVersion) "component" "server") -}}
{{- end -}}

{{/* The metrics Service's labels: dispatch's, with component "metrics", which the ServiceMonitor selects. */}}
{{- define "dispatch.metricsLabels" -}}
{{- include "dispatch.componentLabels" (dict "root" . "selector" (include "dispatch.selectorLabels" .) "version" (.Values.image.tag | default .Chart.AppVersion) "component" "metrics") -}}
{{- end -}}

{{/* The metrics Service's name, kept within 63 characters. */}}
{{- define "dispatch.metricsName" -}}
{{- printf "%s-metrics" (include "dispatch.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- end -}}

{{/*
Labels of one component of the release. Call with
(dict "root" $ "selector" <its selector labels> "version" <its version> "component" <its name>).
*/}}
{{- define "dispatch.componentLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ .selector }}
app.kubernetes.io/version: {{ .version | trunc 63 | quote }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: dispatch
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{- define "dispatch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "dispatch.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "dispatch.image" -}}
{{- include "dispatch.imageRef" (dict "image" .Values.image "defaultTag" .Chart.AppVersion "path" "image") -}}
{{- end -}}

{{/*
"repository@digest" when a digest is set, else "repository:tag". Call with
(dict "image" <values> "defaultTag" <tag when none is set> "path" <values path, for errors>).
*/}}
{{- define "dispatch.imageRef" -}}
{{- $repo := required (printf "%s.repository is required" .path) .image.repository -}}
{{- if .image.digest -}}
{{- printf "%s@%s" $repo .image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (.image.tag | default .defaultTag | required (printf "%s.tag or %s.digest is required" .path .path)) -}}
{{- end -}}
{{- end -}}

{{/* The auth tokens Secret's name. */}}
{{- define "dispatch.authSecretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "dispatch.fullname" .)) -}}
{{- end -}}

{{/*
Seconds dispatchd needs after its drain to exit cleanly: its close is bounded by CLOSE_BUDGET_MS
(6.5 s, src/app/close-app.ts), the rest is its exit. Within it, the plugins that may still end
calls close first (at most FIRST_CLOSE_MS, 1 s); then, together, the trace flush (at most 5 s,
SHUTDOWN_FLUSH_MS in src/telemetry/span-batcher.ts), the tool stats' last flush, the store's
pending records and QUIT, and the relays (each bounded by limits.store_timeout_ms, 1 s by
default). test/helm asserts this against the server's constants.
*/}}
{{- define "dispatch.shutdownCloseSeconds" -}}
7
{{- end -}}

{{/*
A value that must be a whole number >= 0, printed as one; anything else (a string such as "30s",
a fraction) fails the render naming the key, where Helm's `int` would make it 0. A missing key
(`--reuse-values` from a chart without it) is 0, as before. Call with
(dict "value" <the value> "key" <its path in values, for the error>).
*/}}
{{- define "dispatch.wholeNumber" -}}
{{- $v := .value | default 0 -}}
{{- $number := or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v) -}}
{{- if not (and $number (ge (float64 $v) 0.0) (eq (float64 $v) (floor $v))) -}}
{{- fail (printf "%s must be a whole number >= 0, not %s" .key (kindIs "string" $v | ternary (quote $v) (toString $v))) -}}
{{- end -}}
{{- int64 $v -}}
{{- end -}}

{{/* shutdown.<key> as an int, checked by dispatch.wholeNumber. Call with (list $ "<key>"). */}}
{{- define "dispatch.shutdownValue" -}}
{{- $key := index . 1 -}}
{{- include "dispatch.wholeNumber" (dict "value" (index (index . 0).Values.shutdown $key) "key" (printf "shutdown.%s" $key)) -}}
{{- end -}}

{{/*
terminationGracePeriodSeconds: it must outlast the preStop sleep, the server's drain and its
closing (dispatch.shutdownCloseSeconds), or the kubelet kills the pod before the traces are
flushed and Redis is closed.
*/}}
{{- define "dispatch.terminationGracePeriodSeconds" -}}
{{- $preStop := int (include "dispatch.shutdownValue" (list . "preStopSleepSeconds")) -}}
{{- $graceMs := int (include "dispatch.shutdownValue" (list . "graceMs")) -}}
{{- $given := int (include "dispatch.shutdownValue" (list . "terminationGracePeriodSeconds")) -}}
{{- $close := int (include "dispatch.shutdownCloseSeconds" .) -}}
{{- $needed := add $preStop (div (add $graceMs 999) 1000) $close -}}
{{- if $given -}}
{{- if lt $given $needed -}}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must be at least preStopSleepSeconds + graceMs/1000 + %d s to close (trace flush, Redis) (%d)" $given $close $needed) -}}
{{- end -}}
{{- $given -}}
{{- else -}}
{{- $margin := int (include "dispatch.shutdownValue" (list . "marginSeconds")) -}}
{{- if lt $margin $close -}}
{{- fail (printf "shutdown.marginSeconds (%d) must be at least %d: the trace flush and closing Redis after the drain" $margin $close) -}}
{{- end -}}
{{- add $preStop (div (add $graceMs 999) 1000) $margin -}}
{{- end -}}
{{- end -}}

{{/*
One probe. With TLS on, the kubelet's gRPC probe (plaintext only) cannot reach the server, so it
falls back to a TCP check of the gRPC port, or, for a probe with `tlsCheck: metrics` (liveness),
to GET /metrics on the metrics port: the kernel accepts TCP connections for a process whose event
loop is stuck, an HTTP answer needs it running. Call with (dict "probe" .Values.probes.X "root" $).
*/}}
{{- define "dispatch.probe" -}}
{{- if and .root.Values.tls.enabled (eq (.probe.tlsCheck | default "tcp") "metrics") -}}
{{- if not .root.Values.metrics.enabled -}}
{{- fail "probes.liveness.tlsCheck metrics needs metrics.enabled: with TLS on, the liveness check would GET /metrics on a port nothing serves, and the kubelet would restart every pod" -}}
{{- end -}}
httpGet:
  path: /metrics
  port: metrics
{{- else if .root.Values.tls.enabled -}}
tcpSocket:
  port: grpc
{{- else -}}
grpc:
  port: {{ int .root.Values.server.port }}
  {{- with .probe.service }}
  service: {{ . | quote }}
  {{- end }}
{{- end }}
{{ omit .probe "enabled" "service" "tlsCheck" | toYaml }}
{{- end -}}

{{/*
The V8 old-space size in MiB for dispatchd: heapPercent of resources.limits.memory (a Kubernetes
quantity: plain bytes, or k/M/G/T, Ki/Mi/Gi/Ti). "" when there is no memory limit or heapPercent is
0: node then sizes its heap itself. Without the flag, Node 20 takes half the cgroup limit (256 MiB
of a 512Mi pod) and dies "JavaScript heap out of memory" far below the container limit.
*/}}
{{- define "dispatch.maxOldSpaceMiB" -}}
{{- $limit := dig "limits" "memory" "" (.Values.resources | default dict) -}}
{{- $percent := .Values.heapPercent | default 0 -}}
{{- if and $limit $percent -}}
{{- if or (lt (float64 $percent) 1.0) (gt (float64 $percent) 100.0) -}}
{{- fail (printf "heapPercent must be between 1 and 100 (or 0 for no --max-old-space-size), not %v" $percent) -}}
{{- end -}}
{{- $text := kindIs "string" $limit | ternary $limit (printf "%.0f" (float64 $limit)) -}}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $text -}}
{{- $units := dict "" 1.0 "k" 1e3 "M" 1e6 "G" 1e9 "T" 1e12 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 -}}
{{- $suffix := trimPrefix $number $text -}}
{{- if or (not $number) (not (hasKey $units $suffix)) -}}
{{- fail (printf "resources.limits.memory %q is not a memory quantity the chart can size the heap from (a number with no suffix or one of k, M, G, T, Ki, Mi, Gi, Ti); set heapPercent: 0 to leave the heap to node" $text) -}}
{{- end -}}
{{- $mib := floor (divf (mulf (float64 $number) (get $units $suffix) (float64 $percent)) 104857600.0) -}}
{{- if lt $mib 16.0 -}}
{{- fail (printf "heapPercent %v of resources.limits.memory %s is %.0f MiB of heap, under the 16 MiB node needs to start" $percent $text $mib) -}}
{{- end -}}
{{- printf "%.0f" $mib -}}
{{- end -}}
{{- end -}}

{{/*
A Prometheus duration ("30s", "1m30s", "500ms", "1h"; units y w d h m s ms, each at most once, in
that order) in milliseconds; anything else fails the render naming the key. Call with
(dict "value" <the value> "key" <its path in values, for the error>).
*/}}
{{- define "dispatch.durationMs" -}}
{{- $text := toString .value -}}
{{- if or (eq $text "") (not (regexMatch "^(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?$" $text)) -}}
{{- fail (printf "%s must be a Prometheus duration such as 30s or 1m30s, not %q" .key $text) -}}
{{- end -}}
{{- $unit := dict "y" 31536000000 "w" 604800000 "d" 86400000 "h" 3600000 "m" 60000 "s" 1000 "ms" 1 -}}
{{- $total := 0 -}}
{{- range regexFindAll "[0-9]+(ms|y|w|d|h|m|s)" $text -1 -}}
{{- $n := regexFind "^[0-9]+" . -}}
{{- $total = add $total (mul (atoi $n) (get $unit (trimPrefix $n .))) -}}
{{- end -}}
{{- $total -}}
{{- end -}}
