{{/*
The wildcard certificate's Secret (previews.tlsMode wildcard or ingress-default): its namespace
and name, and `<namespace>/<name>` for the operator's --tls-wildcard-secret (empty per preview).
*/}}
{{- define "preview-operator.tlsWildcardSecretName" -}}
{{- .Values.previews.tlsWildcard.secretName | default (printf "%s-wildcard-tls" (include "preview-operator.fullname" .)) -}}
{{- end }}

{{- define "preview-operator.tlsWildcardSecretNamespace" -}}
{{- .Values.previews.tlsWildcard.secretNamespace | default .Release.Namespace -}}
{{- end }}

{{- define "preview-operator.tlsWildcardSecret" -}}
{{- if ne .Values.previews.tlsMode "per-preview" -}}
{{ include "preview-operator.tlsWildcardSecretNamespace" . }}/{{ include "preview-operator.tlsWildcardSecretName" . }}
{{- end -}}
{{- end }}
