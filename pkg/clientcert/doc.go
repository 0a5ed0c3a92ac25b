// Package clientcert watches the client certificate the binder authenticates with. It exports
// when that certificate expires (pv_controller_manager_client_certificate_expiration_timestamp_seconds),
// so that an alert fires weeks before the API server starts refusing every request, and it notices
// when the kubeconfig on disk holds another certificate (a renewal), so that the binder restarts
// with it: client-go reads a kubeconfig's embedded certificate once, when the client is made.
package clientcert
