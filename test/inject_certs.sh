# test/inject_certs.sh: inject_certs DIR makes a throwaway CA (DIR/ca.pem, ca.key) and a
# server certificate for localhost and 127.0.0.1 signed by it (DIR/srv.pem, srv.key), for
# the HTTPS servers of the injection tests (test/helpers/inject_server.py). Source it.
inject_certs() {
	(
		cd "$1" || exit 1
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
			-out ca.pem -days 2 -subj "/CN=owstest inject CA" \
			-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign &&
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key \
				-out srv.csr -subj "/CN=localhost" &&
			printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >ext &&
			openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
				-out srv.pem -extfile ext &&
			chmod 644 ca.pem srv.pem
	) >/dev/null 2>&1
}
