{{/* Chart name, overridable. */}}
{{- define "scriptorium-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release-chart, unless the release name already contains the chart name. */}}
{{- define "scriptorium-operator.fullname" -}}
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

{{- define "scriptorium-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "scriptorium-operator.labels" -}}
helm.sh/chart: {{ include "scriptorium-operator.chart" . }}
{{ include "scriptorium-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: scriptorium
{{- end }}

{{/* Labels that select the operator's pods; never change them after install (selectors are immutable). */}}
{{- define "scriptorium-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "scriptorium-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end }}

{{- define "scriptorium-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "scriptorium-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* registry/repository:tag or registry/repository@digest */}}
{{- define "scriptorium-operator.image" -}}
{{- $repo := .Values.image.repository }}
{{- if .Values.image.registry }}{{ $repo = printf "%s/%s" .Values.image.registry .Values.image.repository }}{{ end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repo .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repo (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}
