{{/* The release's resource name, at most 63 characters. */}}
{{- define "opsbot.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "opsbot.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
opsbot.roleLabel is the label the Service selects on with ha.enabled: the
leader sets it on its own pod when it starts to lead, every process sets
"standby" when it starts standing by (cmd/opsbot/ha_label.go, roleLabel).
Both pods are Ready, so a rollout and a drain can take either; the label
sends HTTP traffic to the leader alone.
*/}}
{{- define "opsbot.roleLabel" -}}
opsbot.dev/role: leader
{{- end -}}

{{- define "opsbot.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "opsbot.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The Secret the tokens come from: the user's or the chart's. */}}
{{- define "opsbot.secretName" -}}
{{- default (include "opsbot.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/*
opsbot.yaml: the chart's base, which puts everything opsbot keeps on /data
and listens for the probes and the Service on all interfaces (so behind the
web API key), with the user's config merged over it. Secrets appear only as
${ENV} references, expanded by opsbot from the pod's environment.
*/}}
{{- define "opsbot.config" -}}
{{- $base := dict
  "log" (dict "format" "json")
  "store" (dict "path" "/data/opsbot.db")
  "web" (dict "listen" "0.0.0.0:8080" "api_key" "${OPSBOT_WEB_API_KEY}")
  "bot" (dict "data_dir" "/data") -}}
{{- if include "opsbot.slack" . -}}
{{- $_ := set $base "slack" (dict "bot_token" "${SLACK_BOT_TOKEN}" "app_token" "${SLACK_APP_TOKEN}") -}}
{{- end -}}
{{- if include "opsbot.discord" . -}}
{{- $_ := set $base "discord" (dict "token" "${DISCORD_BOT_TOKEN}") -}}
{{- end -}}
{{- if .Values.ha.enabled -}}
{{- $_ := set $base "ha" (dict "enabled" true "lease_name" .Values.ha.leaseName "lease_duration" .Values.ha.leaseDuration "renew_deadline" .Values.ha.renewDeadline "retry_period" .Values.ha.retryPeriod) -}}
{{- if include "opsbot.litestream" . -}}
{{- $_ := set $base.ha "litestream" (dict "replica" (include "opsbot.replica" .) "socket" "/run/litestream/litestream.sock" "bin" "/opt/litestream/litestream") -}}
{{- end -}}
{{- end -}}
{{- toYaml (mustMergeOverwrite $base (deepCopy (.Values.config | default dict))) -}}
{{- end -}}

{{/*
opsbot.slack is "true" when the Slack connector is on: a bot token is set,
or slack.connector says the existing Secret has the tokens; "" otherwise.
*/}}
{{- define "opsbot.slack" -}}
{{- if or .Values.slack.connector .Values.slack.botToken -}}true{{- end -}}
{{- end -}}

{{/*
opsbot.discord is "true" when the Discord connector is on: its token is
set, or discord.connector says the existing Secret has it; "" otherwise.
*/}}
{{- define "opsbot.discord" -}}
{{- if or .Values.discord.connector .Values.discord.botToken -}}true{{- end -}}
{{- end -}}

{{/*
opsbot.litestream is "true" when ha replicates the database by a Litestream
sidecar (ha.enabled and ha.litestream.enabled); "" otherwise.
*/}}
{{- define "opsbot.litestream" -}}
{{- if and .Values.ha.enabled .Values.ha.litestream.enabled -}}true{{- end -}}
{{- end -}}

{{/*
opsbot.replica is the replica URL: ha.litestream.replica, or a file replica
on the /replicas claim.
*/}}
{{- define "opsbot.replica" -}}
{{- .Values.ha.litestream.replica | default "file:///replicas/opsbot" -}}
{{- end -}}

{{/*
opsbot.replicaClaim is the claim a file replica is on: ha.litestream.replicaClaim,
or the chart's; "" for a bucket.
*/}}
{{- define "opsbot.replicaClaim" -}}
{{- if hasPrefix "file://" (include "opsbot.replica" .) -}}
{{- .Values.ha.litestream.replicaClaim | default (printf "%s-replicas" (include "opsbot.fullname" .)) -}}
{{- end -}}
{{- end -}}
