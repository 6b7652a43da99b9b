{{/* The namespace of a provider: its own, else capi-system for the core, else <name>-<type>-system. */}}
{{- define "capstan-operator.providerNamespace" -}}
{{- if .config.namespace -}}
{{- .config.namespace -}}
{{- else if eq .type "core" -}}
capi-system
{{- else -}}
{{- printf "%s-%s-system" .name .type -}}
{{- end -}}
{{- end -}}

{{- define "capstan-operator.labels" -}}
app.kubernetes.io/name: capstan-operator
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
