{{/* The release's full name: the release name, with the chart's name when it lacks it. */}}
{{- define "gpu-finops.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpu-finops.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "gpu-finops.serviceAccountName" -}}
{{- default (include "gpu-finops.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "gpu-finops.claimName" -}}
{{- default (printf "%s-data" (include "gpu-finops.fullname" .)) .Values.persistence.existingClaim -}}
{{- end -}}

{{/* The pod spec both CronJobs share, less its container: the volumes, the user, the placement. */}}
{{- define "gpu-finops.podSpec" -}}
serviceAccountName: {{ include "gpu-finops.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
restartPolicy: Never
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
volumes:
  - name: data
    persistentVolumeClaim:
      claimName: {{ include "gpu-finops.claimName" . }}
  - name: config
    configMap:
      name: {{ include "gpu-finops.fullname" . }}
  - name: tmp
    emptyDir: {}
{{- end -}}

{{/* What every container of the chart has: the image, the user's limits, the mounts. */}}
{{- define "gpu-finops.container" -}}
image: {{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) | quote }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
securityContext:
  {{- toYaml .Values.securityContext | nindent 2 }}
env:
  - name: HOME
    value: /tmp
  - name: TMPDIR
    value: /tmp
volumeMounts:
  - name: data
    mountPath: /data
  - name: config
    mountPath: /etc/gpu-finops
    readOnly: true
  - name: tmp
    mountPath: /tmp
{{- end -}}
