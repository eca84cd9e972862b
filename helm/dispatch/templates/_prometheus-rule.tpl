{{/*
A metric's series in an alert's expression: `name{selector}`, or the bare name without a selector.
Call with (list "<metric>" <selector>).
*/}}
{{- define "dispatch.alertSeries" -}}
{{- $selector := index . 1 -}}
{{- if $selector -}}
{{- printf "%s{%s}" (index . 0) $selector -}}
{{- else -}}
{{- index . 0 -}}
{{- end -}}
{{- end -}}

{{/*
An alert's threshold as PromQL reads it; anything but a number >= 0 fails the render naming the key.
Call with (dict "alert" <its values> "key" <its key under metrics.prometheusRule.alerts>).
*/}}
{{- define "dispatch.alertThreshold" -}}
{{- $v := .alert.threshold -}}
{{- if not (and (or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v)) (ge (float64 $v) 0.0)) -}}
{{- fail (printf "metrics.prometheusRule.alerts.%s.threshold must be a number >= 0, not %v" .key $v) -}}
{{- end -}}
{{- printf "%v" $v -}}
{{- end -}}

{{/*
One alerting rule, as YAML: its severity label and `for` (the alert's own, else
metrics.prometheusRule.for) from values, checked as a Prometheus duration. Call with
(dict "root" $ "key" <its key under metrics.prometheusRule.alerts> "alert" <name> "expr" <PromQL>
"summary" <text> "description" <text>).
*/}}
{{- define "dispatch.alertRule" -}}
{{- $pr := .root.Values.metrics.prometheusRule -}}
{{- $a := get $pr.alerts .key -}}
{{- $for := $a.for | default $pr.for -}}
{{- $forKey := "metrics.prometheusRule.for" -}}
{{- if $a.for -}}{{- $forKey = printf "metrics.prometheusRule.alerts.%s.for" .key -}}{{- end -}}
{{- $_ := include "dispatch.durationMs" (dict "value" $for "key" $forKey) -}}
alert: {{ .alert }}
expr: {{ .expr | quote }}
for: {{ $for | quote }}
labels:
  severity: {{ required (printf "metrics.prometheusRule.alerts.%s.severity is required" .key) $a.severity | quote }}
annotations:
  summary: {{ .summary | quote }}
  description: {{ .description | quote }}
{{- end -}}
