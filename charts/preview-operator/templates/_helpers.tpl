{{- define "preview-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "preview-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "preview-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "preview-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "preview-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "preview-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "preview-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "preview-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Whether the process talks to GitHub (and so needs credentials). */}}
{{- define "preview-operator.needsGitHub" -}}
{{- if or (has "webhook" .Values.controllers) (has "resync" .Values.controllers) (has "preview-environment" .Values.controllers) -}}true{{- end -}}
{{- end -}}

{{/* A duration as the operator reads it (1h30m, 15s, 500ms, 1.5s) in milliseconds. */}}
{{- define "preview-operator.durationMs" -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9]+(\\.[0-9]+)?(ms|h|m|s)" (toString .) -1 -}}
{{- $unit := regexFind "(ms|h|m|s)$" . -}}
{{- $scale := get (dict "ms" 1.0 "s" 1000.0 "m" 60000.0 "h" 3600000.0) $unit -}}
{{- $total = addf $total (mulf (float64 (trimSuffix $unit .)) $scale) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* The Service port that serves /metrics: its own, or the webhook's when the two are one. */}}
{{- define "preview-operator.metricsPortName" -}}
{{- if ne (int .Values.metrics.port) (int .Values.webhook.port) -}}metrics{{- else -}}http{{- end -}}
{{- end -}}
