# genroc_no_host_prefix.py — an AWS CLI plugin: StartSyncExecution sent to the
# --endpoint-url as given, not to a host prefixed "sync-" (AWS's own endpoint
# name for it, which a genroc server's address does not have).
#
# An AWS CLI that knows `disable_host_prefix_injection` (the SDKs' shared
# setting) needs no plugin; Debian's awscli 2.9.19 does not know it.  In the
# CLI's config file (AWS_CONFIG_FILE):
#
#   [plugins]
#   cli_legacy_plugin_path = /path/to/this/folder
#   genroc_no_host_prefix = genroc_no_host_prefix


def _no_host_prefix(model, **kwargs):
    # botocore copies hostPrefix from the operation's "endpoint" trait into
    # the request; without it the URL is the endpoint's
    if model.endpoint and 'hostPrefix' in model.endpoint:
        del model.endpoint['hostPrefix']


def awscli_initialize(cli):
    cli.register('before-parameter-build.sfn.StartSyncExecution', _no_host_prefix)
