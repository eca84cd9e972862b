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
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "dispatch.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | trunc 63 | quote }}
app.kubernetes.io/component: server
app.kubernetes.io/part-of: dispatch
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "dispatch.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "dispatch.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "dispatch.image" -}}
{{- $repo := required "image.repository is required" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The auth tokens Secret's name. */}}
{{- define "dispatch.authSecretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "dispatch.fullname" .)) -}}
{{- end -}}

{{/*
The Redis URL for DISPATCH_REDIS_URL, in the forms the server accepts:
  standalone redis[s]://host:port/db
  sentinel   redis-sentinel://host1:26379,host2:26379/MASTER
  cluster    redis-cluster://host1:6379,host2:6379
Empty for mode "none". The password never goes into the URL (DISPATCH_REDIS_PASSWORD instead).
*/}}
{{- define "dispatch.redisURL" -}}
{{- $r := .Values.redis -}}
{{- if and $r.tls.enabled (ne $r.mode "standalone") -}}
{{- fail "redis.tls.enabled is supported only with redis.mode standalone (rediss://); set redis.url for other setups" -}}
{{- end -}}
{{- if $r.url -}}
{{- $r.url -}}
{{- else if eq $r.mode "standalone" -}}
{{- $host := required "redis.standalone.host is required when redis.mode is standalone" $r.standalone.host -}}
{{- printf "%s://%s:%d/%d" (ternary "rediss" "redis" $r.tls.enabled) $host (int $r.standalone.port) (int $r.standalone.db) -}}
{{- else if eq $r.mode "sentinel" -}}
{{- if not $r.sentinel.hosts -}}
{{- fail "redis.sentinel.hosts needs at least one host:port when redis.mode is sentinel" -}}
{{- end -}}
{{- $master := required "redis.sentinel.masterName is required when redis.mode is sentinel" $r.sentinel.masterName -}}
{{- printf "redis-sentinel://%s/%s" (join "," $r.sentinel.hosts) $master -}}
{{- else if eq $r.mode "cluster" -}}
{{- if not $r.cluster.nodes -}}
{{- fail "redis.cluster.nodes needs at least one host:port when redis.mode is cluster" -}}
{{- end -}}
{{- printf "redis-cluster://%s" (join "," $r.cluster.nodes) -}}
{{- else if eq $r.mode "none" -}}
{{- if or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) -}}
{{- fail "redis.mode none keeps idempotency and loop state in each pod's memory: use it only with replicaCount 1 and autoscaling.enabled false, or point redis.mode at a shared Redis" -}}
{{- end -}}
{{- else -}}
{{- fail (printf "redis.mode must be none, standalone, sentinel or cluster, not %q" $r.mode) -}}
{{- end -}}
{{- end -}}

{{/* terminationGracePeriodSeconds: it must outlast the preStop sleep plus the server's drain. */}}
{{- define "dispatch.terminationGracePeriodSeconds" -}}
{{- $s := .Values.shutdown -}}
{{- $needed := add (int $s.preStopSleepSeconds) (div (add (int $s.graceMs) 999) 1000) -}}
{{- if $s.terminationGracePeriodSeconds -}}
{{- if le (int64 $s.terminationGracePeriodSeconds) $needed -}}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must be larger than preStopSleepSeconds + graceMs/1000 (%d)" (int $s.terminationGracePeriodSeconds) $needed) -}}
{{- end -}}
{{- int $s.terminationGracePeriodSeconds -}}
{{- else -}}
{{- add $needed (int $s.marginSeconds) -}}
{{- end -}}
{{- end -}}

{{/*
One probe. With TLS on, the kubelet's gRPC probe (plaintext only) cannot reach the server, so it
falls back to a TCP check of the gRPC port. Call with (dict "probe" .Values.probes.X "root" $).
*/}}
{{- define "dispatch.probe" -}}
{{- if .root.Values.tls.enabled -}}
tcpSocket:
  port: grpc
{{- else -}}
grpc:
  port: {{ int .root.Values.server.port }}
  {{- with .probe.service }}
  service: {{ . | quote }}
  {{- end }}
{{- end }}
{{ omit .probe "enabled" "service" | toYaml }}
{{- end -}}
