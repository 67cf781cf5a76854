{{/* The chart's name, truncated to 63 characters (a label value's limit). */}}
{{- define "barbican-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's full name: the prefix of every object the chart creates. */}}
{{- define "barbican-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels every object carries. */}}
{{- define "barbican-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "barbican-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: barbican-operator
{{- end }}

{{/* The labels that select the operator's pods. */}}
{{- define "barbican-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "barbican-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "barbican-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "barbican-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference: repository@digest when a digest is set, else repository:tag. */}}
{{- define "barbican-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The webhook's Service, whose DNS name the serving certificate carries. */}}
{{- define "barbican-operator.webhookService" -}}
{{- printf "%s-webhook" (include "barbican-operator.fullname" .) }}
{{- end }}

{{/* The Secret the webhook's serving certificate is read from. */}}
{{- define "barbican-operator.webhookSecret" -}}
{{- if .Values.webhook.certManager.enabled }}
{{- printf "%s-webhook-tls" (include "barbican-operator.fullname" .) }}
{{- else }}
{{- required "webhook.secretName is required when webhook.certManager.enabled is false" .Values.webhook.secretName }}
{{- end }}
{{- end }}

{{/* Fails the render on a mode the chart does not know. */}}
{{- define "barbican-operator.mode" -}}
{{- if not (has .Values.mode (list "operator" "target")) }}
{{- fail (printf "mode must be operator or target, not %q" .Values.mode) }}
{{- end }}
{{- .Values.mode }}
{{- end }}
