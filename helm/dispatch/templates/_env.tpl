{{/*
The container's environment variables the chart sets from its values, in order, as a YAML list.
extraEnv follows them, and dispatch.checkExtraEnv refuses an extraEnv entry of any name in it.
*/}}
{{- define "dispatch.env" -}}
{{- $redisURL := include "dispatch.redisURL" . -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: DISPATCH_LISTEN
  value: {{ include "dispatch.listenAddress" (list $ .Values.server.port) | quote }}
- name: DISPATCH_CONFIG
  value: /etc/dispatch/config/config.yaml
- name: DISPATCH_GRACE_MS
  value: {{ include "dispatch.shutdownValue" (list $ "graceMs") | quote }}
- name: TMPDIR
  value: /tmp
{{- if .Values.server.insecure }}
- name: DISPATCH_INSECURE
  value: "1"
{{- end }}
{{- if $redisURL }}
- name: DISPATCH_REDIS_URL
  value: {{ $redisURL | quote }}
{{- end }}
{{- with include "dispatch.redisPasswordSecret" . }}
- name: DISPATCH_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ include "dispatch.redisPasswordKey" $ | quote }}
{{- end }}
{{- with include "dispatch.redisSentinelAuthEnv" . }}
{{ . | trim }}
{{- end }}
{{- with include "dispatch.redisTLSEnv" . }}
{{ . | trim }}
{{- end }}
{{- if .Values.auth.enabled }}
- name: DISPATCH_AUTH_TOKENS_FILE
  value: {{ printf "/etc/dispatch/auth/%s" .Values.auth.secretKey | quote }}
{{- end }}
{{- if .Values.tls.enabled }}
- name: DISPATCH_TLS_CERT
  value: /etc/dispatch/tls/tls.crt
- name: DISPATCH_TLS_KEY
  value: /etc/dispatch/tls/tls.key
{{- if .Values.tls.mutual }}
- name: DISPATCH_TLS_CA
  value: /etc/dispatch/tls/ca.crt
{{- end }}
{{- end }}
{{- if .Values.metrics.enabled }}
- name: DISPATCH_METRICS_LISTEN
  value: {{ include "dispatch.listenAddress" (list $ .Values.metrics.port) | quote }}
{{- end }}
{{- with .Values.tracing }}
{{- if .enabled }}
- name: OTEL_TRACES_EXPORTER
  value: otlp
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ required "tracing.endpoint is required when tracing.enabled is true" .endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .protocol | quote }}
- name: OTEL_SERVICE_NAME
  value: {{ .serviceName | default (include "dispatch.fullname" $) | quote }}
{{- $attrs := list "k8s.namespace.name=$(POD_NAMESPACE)" "k8s.pod.name=$(POD_NAME)" "service.instance.id=$(POD_NAME)" }}
{{- range $k, $v := .resourceAttributes }}{{ $attrs = append $attrs (printf "%s=%s" (include "dispatch.otelAttributeText" $k) (include "dispatch.otelAttributeText" $v)) }}{{ end }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ join "," $attrs | quote }}
{{- with .sampler }}
- name: OTEL_TRACES_SAMPLER
  value: {{ . | quote }}
{{- end }}
{{- /* Not `with`: a samplerArg of 0 (sample no new trace) is a value, not "unset" (which is 1). */}}
{{- if and (not (kindIs "invalid" .samplerArg)) (ne (toString .samplerArg) "") }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ toString .samplerArg | quote }}
{{- end }}
{{- else }}
- name: OTEL_TRACES_EXPORTER
  value: none
{{- end }}
{{- end }}
{{- with include "dispatch.nodeOptions" . }}
- name: NODE_OPTIONS
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/*
"<server.listenHost>:<port>" for DISPATCH_LISTEN and DISPATCH_METRICS_LISTEN; call with
(list $ <port>). The host is what dispatchd's HOST:PORT parser takes: an IPv4 address or a name,
or an IPv6 address in brackets. "0.0.0.0" when the key is missing (`--reuse-values` from a chart
without it).
*/}}
{{- define "dispatch.listenAddress" -}}
{{- $host := toString ((index . 0).Values.server.listenHost | default "0.0.0.0") -}}
{{- if not (regexMatch "^(\\[[0-9a-fA-F:.]+\\]|[^:\\s\\[\\]]+)$" $host) -}}
{{- fail (printf "server.listenHost must be an IPv4 address or a host name, or an IPv6 address in brackets (\"[::]\"), not %q" $host) -}}
{{- end -}}
{{- printf "%s:%d" $host (int (index . 1)) -}}
{{- end -}}

{{/*
Fails when server.extraArgs sets a flag the chart already sets through its environment variable:
dispatchd takes a flag over the variable, so the probes, Services, termination grace period,
mounts or Redis the chart derives from its values would no longer match the server.
*/}}
{{- define "dispatch.checkExtraArgs" -}}
{{- $owned := dict "listen" "server.port and server.listenHost" "config" "config" "grace" "shutdown.graceMs" "insecure" "server.insecure" "redis" "redis.* (redis.url for a URL of your own)" "metrics-listen" "metrics.enabled and metrics.port (host: server.listenHost)" "tls-cert" "tls.*" "tls-key" "tls.*" "tls-ca" "tls.mutual" -}}
{{- range .Values.server.extraArgs -}}
{{- $flag := regexFind "^--[a-z-]+" (toString .) | trimPrefix "--" -}}
{{- if and $flag (hasKey $owned $flag) (regexMatch (printf "^--%s(=.*)?$" $flag) (toString .)) -}}
{{- fail (printf "server.extraArgs must not set --%s: the chart sets it through its environment variable from %s, and a flag would win over it" $flag (get $owned $flag)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Fails when extraEnv sets a variable the chart sets itself: every name dispatch.env renders with
these values (so a variable added there is refused without a list to keep up), and those below
whatever the values (a Secret's password, a certificate path, an OTLP setting given past the
chart's values). extraEnv follows the chart's variables and the kubelet takes the last entry of a
name (the API server only warns "hides previous definition"), so it would silently replace the
chart's value: the probes, Services, grace period, mounts, Secrets, Redis or traces derived from
the values would no longer match the server. NODE_OPTIONS is merged instead (dispatch.nodeOptions).
*/}}
{{- define "dispatch.checkExtraEnv" -}}
{{- $from := `
POD_NAME: the pod's own metadata.name
POD_NAMESPACE: the pod's own metadata.namespace
DISPATCH_LISTEN: server.port and server.listenHost
DISPATCH_CONFIG: config
DISPATCH_GRACE_MS: shutdown.graceMs
TMPDIR: tmpDir (the emptyDir mounted at /tmp)
DISPATCH_INSECURE: server.insecure
DISPATCH_REDIS_URL: redis.* (redis.url for a URL of your own)
DISPATCH_REDIS_PASSWORD: redis.existingSecret (or the bundled Redis's generated password)
DISPATCH_REDIS_SENTINEL_PASSWORD: redis.sentinel.auth
DISPATCH_REDIS_SENTINEL_USERNAME: redis.sentinel.auth.username
DISPATCH_REDIS_TLS_CA: redis.tls.enabled, redis.tls.existingSecret and redis.tls.caCertificate
DISPATCH_REDIS_TLS_CERT: redis.tls.clientCertificate and redis.tls.existingSecret
DISPATCH_REDIS_TLS_KEY: redis.tls.clientCertificate and redis.tls.existingSecret
DISPATCH_AUTH_TOKENS_FILE: auth.enabled, auth.existingSecret and auth.secretKey
DISPATCH_TLS_CERT: tls.*
DISPATCH_TLS_KEY: tls.*
DISPATCH_TLS_CA: tls.mutual
DISPATCH_METRICS_LISTEN: metrics.enabled and metrics.port (host server.listenHost)
OTEL_TRACES_EXPORTER: tracing.enabled
OTEL_EXPORTER_OTLP_ENDPOINT: tracing.endpoint
OTEL_EXPORTER_OTLP_PROTOCOL: tracing.protocol
OTEL_SERVICE_NAME: tracing.serviceName
OTEL_RESOURCE_ATTRIBUTES: tracing.resourceAttributes
OTEL_TRACES_SAMPLER: tracing.sampler
OTEL_TRACES_SAMPLER_ARG: tracing.samplerArg
` | fromYaml -}}
{{- range include "dispatch.env" . | fromYamlArray -}}
{{- if and (ne .name "NODE_OPTIONS") (not (hasKey $from .name)) -}}
{{- $_ := set $from .name "its values" -}}
{{- end -}}
{{- end -}}
{{- range .Values.extraEnv -}}
{{- $name := toString (.name | default "") -}}
{{- if hasKey $from $name -}}
{{- fail (printf "extraEnv must not set %s: the chart sets it from %s, and the later entry (extraEnv's) would replace it" $name (get $from $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
NODE_OPTIONS for dispatchd: --max-old-space-size from dispatch.maxOldSpaceMiB, merged with a
NODE_OPTIONS given as a plain value in extraEnv (theirs follows ours; one that sets
--max-old-space-size itself is kept as given). Empty when there is nothing to set, or when extraEnv
sets NODE_OPTIONS from a valueFrom (that entry is then rendered as given).
*/}}
{{- define "dispatch.nodeOptions" -}}
{{- $mib := include "dispatch.maxOldSpaceMiB" . -}}
{{- $user := "" -}}
{{- $fromRef := false -}}
{{- range .Values.extraEnv -}}
{{- if eq (.name | default "") "NODE_OPTIONS" -}}
{{- if hasKey . "valueFrom" -}}{{- $fromRef = true -}}{{- else -}}{{- $user = toString (.value | default "") -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $fromRef -}}
{{- if or (not $mib) (contains "--max-old-space-size" $user) -}}
{{- $user -}}
{{- else -}}
{{- trim (printf "--max-old-space-size=%s %s" $mib $user) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
A key or value of OTEL_RESOURCE_ATTRIBUTES: ",", "=" and "%" percent-encoded, as the variable's
format requires. OpenTelemetry's env detector drops the whole variable (k8s.pod.name and the
chart's other attributes with it) at one unencoded "," or "=", and decodes "%" sequences.
*/}}
{{- define "dispatch.otelAttributeText" -}}
{{- toString . | replace "%" "%25" | replace "," "%2C" | replace "=" "%3D" -}}
{{- end -}}
