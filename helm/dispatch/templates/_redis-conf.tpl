{{/*
The bundled Redis's redis.conf. The ConfigMap holds it and the Redis pod template carries its
checksum (checksum/redis-config), so a change to it, and nothing else (not the chart's version
in the ConfigMap's labels), rolls the pod.
*/}}
{{- define "dispatch.redisConf" -}}
{{- $d := .Values.redis.deploy -}}
port 6379
bind * -::*
# Reachable from other pods; the server requires its password (--requirepass) unless
# redis.deploy.generatePassword is false and redis.existingSecret is empty.
protected-mode no
dir /data
# dispatch's at-most-once guarantee rests on its idempotency records: each write is in the
# append-only file and fsynced before Redis acknowledges it, so an acknowledged record survives
# a restart or a crash. The append-only file is the only persistence (no RDB snapshots).
appendonly yes
appendfsync always
save ""
# An evicted record is a forgotten one: past maxmemory Redis refuses writes instead, and
# dispatch fails side-effecting calls closed.
{{- with $d.maxmemory }}
maxmemory {{ . }}
{{- end }}
maxmemory-policy noeviction
{{- with $d.extraConfig }}
{{ . }}
{{- end }}
{{- end -}}
