{{/*
The bundled Redis's pods carry another app.kubernetes.io/name than dispatch's, so that no dispatch
Service, PDB, HPA or spread constraint (all select name + instance) ever selects them.
*/}}
{{- define "dispatch.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-redis" (include "dispatch.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "dispatch.redisLabels" -}}
{{- include "dispatch.componentLabels" (dict "root" . "selector" (include "dispatch.redisSelectorLabels" .) "version" (.Values.redis.deploy.image.tag | default "" | toString) "component" "redis") -}}
{{- end -}}

{{/*
The bundled Redis's pod template labels: its labels without helm.sh/chart, so that a chart upgrade
that changes nothing of the Redis pod leaves its one replica running (while it restarts,
side-effecting calls fail closed). The version label is the image tag, whose change restarts it
anyway.
*/}}
{{- define "dispatch.redisPodLabels" -}}
{{- omit (include "dispatch.redisLabels" . | fromYaml) "helm.sh/chart" | toYaml | trimSuffix "\n" -}}
{{- end -}}

{{/*
Name of the bundled Redis's StatefulSet, Service and ConfigMap, kept within 52 characters: the
StatefulSet controller labels each pod with `controller-revision-hash: <name>-<10 characters>`,
which must fit in 63.
*/}}
{{- define "dispatch.redisName" -}}
{{- printf "%s-redis" (include "dispatch.fullname" . | trunc 46 | trimSuffix "-") -}}
{{- end -}}

{{/*
"true" when the chart deploys its own Redis: redis.deploy.enabled in standalone mode, unless
redis.url or redis.standalone.host names another Redis (those win, as before the bundled Redis
existed). Sentinel, Cluster and none never get the bundled Redis.
*/}}
{{- define "dispatch.redisBundled" -}}
{{- $r := .Values.redis -}}
{{- if and $r.deploy.enabled (eq $r.mode "standalone") (not $r.url) (not $r.standalone.host) -}}
true
{{- end -}}
{{- end -}}

{{/*
"true" when the chart generates the bundled Redis's password: redis.deploy.generatePassword, and
on when the key is missing (`helm upgrade --reuse-values` from a chart without it).
*/}}
{{- define "dispatch.redisGeneratesPassword" -}}
{{- $d := .Values.redis.deploy -}}
{{- if and (include "dispatch.redisBundled" .) (not .Values.redis.existingSecret) (or (not (hasKey $d "generatePassword")) $d.generatePassword) -}}
true
{{- end -}}
{{- end -}}

{{/*
The Secret holding the Redis password, empty for none: redis.existingSecret, else the one the
chart generates for its bundled Redis. Its key is redis.existingSecretPasswordKey either way.
*/}}
{{- define "dispatch.redisPasswordSecret" -}}
{{- if .Values.redis.existingSecret -}}
{{- .Values.redis.existingSecret -}}
{{- else if include "dispatch.redisGeneratesPassword" . -}}
{{- printf "%s-auth" (include "dispatch.redisName" .) -}}
{{- end -}}
{{- end -}}

{{/* The key of the Redis password in its Secret. */}}
{{- define "dispatch.redisPasswordKey" -}}
{{- required "redis.existingSecretPasswordKey is required" .Values.redis.existingSecretPasswordKey -}}
{{- end -}}

{{/*
The Sentinels' own credentials, as container env entries (DISPATCH_REDIS_SENTINEL_PASSWORD from
redis.sentinel.auth.existingSecret, or from the Redis password's Secret with useRedisPassword;
DISPATCH_REDIS_SENTINEL_USERNAME), in sentinel mode only. Empty otherwise.
*/}}
{{- define "dispatch.redisSentinelAuthEnv" -}}
{{- $r := .Values.redis -}}
{{- $a := $r.sentinel.auth | default dict -}}
{{- if and (eq $r.mode "sentinel") (or $a.useRedisPassword $a.existingSecret $a.username) -}}
{{- if and $a.useRedisPassword $a.existingSecret -}}
{{- fail "redis.sentinel.auth: set useRedisPassword or existingSecret, not both" -}}
{{- end -}}
{{- $secret := "" -}}
{{- $key := "" -}}
{{- if $a.useRedisPassword -}}
{{- $secret = required "redis.sentinel.auth.useRedisPassword needs the Redis password in redis.existingSecret" (include "dispatch.redisPasswordSecret" .) -}}
{{- $key = include "dispatch.redisPasswordKey" . -}}
{{- else if $a.existingSecret -}}
{{- $secret = $a.existingSecret -}}
{{- $key = required "redis.sentinel.auth.existingSecretPasswordKey is required" $a.existingSecretPasswordKey -}}
{{- end -}}
{{- with $secret }}
- name: DISPATCH_REDIS_SENTINEL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $key | quote }}
{{- end }}
{{- with $a.username }}
- name: DISPATCH_REDIS_SENTINEL_USERNAME
  value: {{ . | quote }}
{{- end }}
{{- end -}}
{{- end -}}

{{/*
The Secret of the PEM files for TLS to Redis (redis.tls.existingSecret), mounted at
/etc/dispatch/redis-tls; empty for none. Fails for files dispatchd would refuse or that could
not be there: the Secret without redis.tls.enabled (dispatchd stops at start, exit 2, when the
DISPATCH_REDIS_TLS_* files come with a URL that does not ask for TLS), a client certificate
without the Secret holding it, a Secret of which nothing is used (neither its CA nor a client
certificate).
*/}}
{{- define "dispatch.redisTLSSecret" -}}
{{- $t := .Values.redis.tls | default dict -}}
{{- if and $t.existingSecret (not $t.enabled) -}}
{{- fail "redis.tls.existingSecret is set but redis.tls.enabled is false: dispatchd refuses TLS files for a connection without TLS (it stops at start); set redis.tls.enabled true, or remove redis.tls.existingSecret" -}}
{{- end -}}
{{- if and $t.clientCertificate (not $t.existingSecret) -}}
{{- fail "redis.tls.clientCertificate needs redis.tls.existingSecret: the Secret holding the client certificate (tls.crt and tls.key) and ca.crt" -}}
{{- end -}}
{{- if and $t.existingSecret (eq (toString $t.caCertificate) "false") (not $t.clientCertificate) -}}
{{- fail "redis.tls.existingSecret is set, but neither its ca.crt (redis.tls.caCertificate is false) nor a client certificate (redis.tls.clientCertificate) is used: remove redis.tls.existingSecret, or set one of them" -}}
{{- end -}}
{{- if $t.enabled -}}
{{- $t.existingSecret -}}
{{- end -}}
{{- end -}}

{{/*
The files of redis.tls.existingSecret as container env entries: DISPATCH_REDIS_TLS_CA (its
ca.crt, trusted beside Node's own CAs) unless redis.tls.caCertificate is false (unset, as from a
chart without the key, is true), and DISPATCH_REDIS_TLS_CERT / DISPATCH_REDIS_TLS_KEY (its
tls.crt and tls.key) with redis.tls.clientCertificate. Empty without the Secret.
*/}}
{{- define "dispatch.redisTLSEnv" -}}
{{- if include "dispatch.redisTLSSecret" . }}
{{- $t := .Values.redis.tls | default dict -}}
{{- if ne (toString $t.caCertificate) "false" }}
- name: DISPATCH_REDIS_TLS_CA
  value: /etc/dispatch/redis-tls/ca.crt
{{- end }}
{{- if $t.clientCertificate }}
- name: DISPATCH_REDIS_TLS_CERT
  value: /etc/dispatch/redis-tls/tls.crt
- name: DISPATCH_REDIS_TLS_KEY
  value: /etc/dispatch/redis-tls/tls.key
{{- end }}
{{- end }}
{{- end -}}

{{/*
The Redis URL for DISPATCH_REDIS_URL, in the forms the server accepts (the "s" forms with
redis.tls.enabled):
  standalone redis[s]://host:port/db (the bundled Redis's Service when the chart deploys one)
  sentinel   redis[s]-sentinel://host1:26379,host2:26379/MASTER
  cluster    redis[s]-cluster://host1:6379,host2:6379
Empty for mode "none", which refuses a redis.url. The password never goes into the URL (DISPATCH_REDIS_PASSWORD instead).
redis.url is used as given, and must ask for TLS (rediss://, rediss-sentinel://, rediss-cluster://)
when redis.tls.enabled does.
*/}}
{{- define "dispatch.redisURL" -}}
{{- $r := .Values.redis -}}
{{- if and (eq $r.mode "none") $r.url -}}
{{- fail "redis.mode none keeps state in each pod's memory, but redis.url is set too: set redis.mode to the kind of Redis the URL names (standalone, sentinel or cluster) to use it, or remove redis.url to keep state in memory (one replica, no HPA)" -}}
{{- end -}}
{{- $tls := ($r.tls | default dict).enabled -}}
{{- if and $tls (eq $r.mode "none") -}}
{{- fail "redis.tls.enabled is set, but redis.mode none connects to no Redis (state in each pod's memory): set redis.mode to the kind of Redis to reach over TLS, or redis.tls.enabled false" -}}
{{- end -}}
{{- if $r.url -}}
{{- if and $tls (not (regexMatch "(?i)^\\s*rediss(-sentinel|-cluster)?://" $r.url)) -}}
{{- fail "redis.tls.enabled asks for TLS, but redis.url does not: start it with rediss://, rediss-sentinel:// or rediss-cluster://, or set redis.tls.enabled false" -}}
{{- end -}}
{{- $r.url -}}
{{- else if include "dispatch.redisBundled" . -}}
{{- if $tls -}}
{{- fail "redis.tls.enabled needs an external Redis: the bundled one (redis.deploy.enabled) serves no TLS; set redis.standalone.host, or redis.deploy.enabled false" -}}
{{- end -}}
{{- /* Its redis.conf keeps Redis's default `databases 16`: SELECT 16 fails and dispatchd refuses to start. */ -}}
{{- if ge (int $r.standalone.db) 16 -}}
{{- fail (printf "redis.standalone.db (%d) must be below 16 with the bundled Redis, which has databases 0 to 15" (int $r.standalone.db)) -}}
{{- end -}}
{{- printf "redis://%s:6379/%d" (include "dispatch.redisName" .) (int $r.standalone.db) -}}
{{- else if eq $r.mode "standalone" -}}
{{- printf "%s://%s:%d/%d" (ternary "rediss" "redis" (not (not $tls))) ($r.standalone.host | default "redis-master") (int $r.standalone.port) (int $r.standalone.db) -}}
{{- else if eq $r.mode "sentinel" -}}
{{- if not $r.sentinel.hosts -}}
{{- fail "redis.sentinel.hosts needs at least one host:port when redis.mode is sentinel" -}}
{{- end -}}
{{- $master := required "redis.sentinel.masterName is required when redis.mode is sentinel" $r.sentinel.masterName -}}
{{- printf "%s://%s/%s" (ternary "rediss-sentinel" "redis-sentinel" (not (not $tls))) (join "," $r.sentinel.hosts) $master -}}
{{- else if eq $r.mode "cluster" -}}
{{- if not $r.cluster.nodes -}}
{{- fail "redis.cluster.nodes needs at least one host:port when redis.mode is cluster" -}}
{{- end -}}
{{- printf "%s://%s" (ternary "rediss-cluster" "redis-cluster" (not (not $tls))) (join "," $r.cluster.nodes) -}}
{{- else if eq $r.mode "none" -}}
{{- if or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1) -}}
{{- fail "redis.mode none keeps idempotency and loop state in each pod's memory: use it only with replicaCount 1 and autoscaling.enabled false, or point redis.mode at a shared Redis" -}}
{{- end -}}
{{- else -}}
{{- fail (printf "redis.mode must be none, standalone, sentinel or cluster, not %q" $r.mode) -}}
{{- end -}}
{{- end -}}
