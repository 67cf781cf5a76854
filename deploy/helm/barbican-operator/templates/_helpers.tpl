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

{{/* The operator's rules on cluster-scoped kinds (its ClusterRole in any case). */}}
{{- define "barbican-operator.clusterRules" }}
  # The validating webhook checks a named PriorityClass exists.
  - apiGroups: [scheduling.k8s.io]
    resources: [priorityclasses]
    verbs: [get]
  # A Barbican may name an External Secrets ClusterSecretStore.
  - apiGroups: [external-secrets.io]
    resources: [clustersecretstores]
    verbs: [get, list, watch]
{{- end }}

{{/* The operator's rules in the namespaces it watches: in its ClusterRole when it watches all
of them, in a Role per namespace of watchNamespaces otherwise. */}}
{{- define "barbican-operator.namespacedRules" }}
  # The operator's own kinds: watched, finalizers and status written.
  - apiGroups: [barbican.openstack.c5c3.io]
    resources: [barbicans, barbicansecretstores]
    verbs: [get, list, watch, patch]
  - apiGroups: [barbican.openstack.c5c3.io]
    resources: [barbicans/status, barbicansecretstores/status]
    verbs: [patch]
  # Events on the CRs (a repeated event patches its series).
  - apiGroups: [events.k8s.io]
    resources: [events]
    verbs: [create, patch]
  # Secrets: credentials, CA bundles and target-cluster registrations read; the config and
  # AppRole credentials written (server-side apply); old config Secrets pruned.
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch, create, patch, delete]
  # The claim the dumps before a migration go to (spec.dbBackup), read before the dump.
  - apiGroups: [""]
    resources: [persistentvolumeclaims]
    verbs: [get]
  # The policy ConfigMap named by spec.policyOverrides.configMapRef (read), and the CA a
  # Gateway verifies HTTPS pods with ({name}-tls-ca, with spec.gateway and spec.tls).
  - apiGroups: [""]
    resources: [configmaps]
    verbs: [get, list, watch, create, patch, delete]
  # The children of a Barbican, read from the watch cache. Server-side apply creates and
  # updates them; the ones whose block can go away (or that are replaced) are deleted, the rest
  # are garbage-collected. `get` reads a child the cache does not hold before it is written:
  # one created a moment ago, or an object of someone else's under the child's name, which the
  # ownership rule leaves alone.
  - apiGroups: [""]
    resources: [services]
    verbs: [get, list, watch, create, patch]
  - apiGroups: [apps]
    resources: [deployments]
    verbs: [get, list, watch, create, patch, delete]
  - apiGroups: [batch]
    resources: [jobs]
    verbs: [get, list, watch, create, delete]
  - apiGroups: [batch]
    resources: [cronjobs]
    verbs: [get, list, watch, create, patch]
  - apiGroups: [policy]
    resources: [poddisruptionbudgets]
    verbs: [get, list, watch, create, patch]
  - apiGroups: [autoscaling]
    resources: [horizontalpodautoscalers]
    verbs: [get, list, watch, create, patch, delete]
  - apiGroups: [networking.k8s.io]
    resources: [networkpolicies]
    verbs: [get, list, watch, create, patch, delete]
  - apiGroups: [gateway.networking.k8s.io]
    resources: [httproutes, backendtlspolicies]
    verbs: [get, list, watch, create, patch, delete]
  # cert-manager: the API's certificate (spec.tls.issuerRef).
  - apiGroups: [cert-manager.io]
    resources: [certificates]
    verbs: [get, list, watch, create, patch, delete]
  # mariadb-operator: the cluster is read, the database, user and grant are managed (and
  # deleted by the finalizer). The inputs below are read from the watch cache; `get` serves
  # a kind whose CRD was installed after the operator started (it has no watch then).
  - apiGroups: [k8s.mariadb.com]
    resources: [mariadbs]
    verbs: [get, list, watch]
  - apiGroups: [k8s.mariadb.com]
    resources: [databases, users, grants]
    verbs: [get, list, watch, create, patch, delete]
  # External Secrets and the OpenBao operator are read. A credential Secret that is missing
  # is explained by reading the ExternalSecret of the same name.
  - apiGroups: [external-secrets.io]
    resources: [secretstores]
    verbs: [get, list, watch]
  - apiGroups: [external-secrets.io]
    resources: [externalsecrets]
    verbs: [get]
  - apiGroups: [openbao.org]
    resources: [openbaoclusters]
    verbs: [get, list, watch]
{{- end }}

{{/* The namespaces the operator watches, comma-separated: watchNamespaces, else the release
namespace alone; "" with watchAllNamespaces (every namespace, the opt-in broad mode). */}}
{{- define "barbican-operator.watchedNamespaces" -}}
{{- if .Values.watchAllNamespaces }}
{{- if .Values.watchNamespaces }}
{{- fail "watchAllNamespaces watches every namespace: leave watchNamespaces empty, or set watchAllNamespaces=false to watch only the listed ones" }}
{{- end }}
{{- else if .Values.watchNamespaces }}
{{- join "," .Values.watchNamespaces }}
{{- else }}
{{- .Release.Namespace }}
{{- end }}
{{- end }}
