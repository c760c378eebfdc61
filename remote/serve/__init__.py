"""`dcomplete engine --ray`: the engine server as N replicas on Ray Serve behind one ingress that routes each
document's requests to the replica holding its keys/values.

Modules: `routing` (document keys and the choice of replica, no Ray), `replica` (the engine-server app in
a Serve replica), `ingress` (the HTTP entry: routing, retries, health, metrics), `fleet_metrics` (the
ingress's Prometheus exposition), `launch` (deploying it all; the subcommand is `cli.engine_command`).
"""
