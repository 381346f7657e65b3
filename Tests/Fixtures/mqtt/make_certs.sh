#!/usr/bin/env bash
# Makes the throwaway PKI of strapd's MQTT TLS tests, with the openssl CLI, in DIR:
#   ca.crt ca.key                   the test CA
#   server.crt server.key           CN=localhost, SAN DNS:localhost IP:127.0.0.1, signed by the CA
#   client.crt client.key           CN=strapd-test-client, signed by the CA (mutual TLS)
#   rogue-ca.crt rogue-ca.key       another CA, that nobody trusts
#   rogue-server.crt rogue-server.key  same names as server.crt, signed by the rogue CA
# EC P-256 keys (fast); keys are mode 0600. Idempotent: when every file is there and the
# certificates still verify, nothing is redone. Quiet unless something fails.
# Usage: make_certs.sh DIR   (exit 0 done, 1 openssl failed, 2 usage)
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
mkdir -p "$dir"
cd "$dir"

files="ca.crt ca.key server.crt server.key client.crt client.key rogue-ca.crt rogue-ca.key rogue-server.crt rogue-server.key"
complete() {
  for f in $files; do [ -s "$f" ] || return 1; done
  # -checkend: regenerate rather than let a test fail on an expired certificate.
  openssl verify -CAfile ca.crt server.crt client.crt >/dev/null 2>&1 &&
    openssl verify -CAfile rogue-ca.crt rogue-server.crt >/dev/null 2>&1 &&
    openssl x509 -checkend 86400 -noout -in server.crt >/dev/null 2>&1
}
complete && exit 0

umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
days=3650

newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# ca NAME CN: a self-signed CA
ca() {
  newkey "$1.key"
  openssl req -new -x509 -key "$1.key" -out "$1.crt" -days "$days" -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" 2>/dev/null
}

# leaf NAME CA CN EXTFILE: a key and a certificate signed by CA
leaf() {
  newkey "$1.key"
  openssl req -new -key "$1.key" -out "$tmp/$1.csr" -subj "/CN=$3" 2>/dev/null
  # A random serial: no .srl file left behind, and re-made certificates never collide.
  openssl x509 -req -in "$tmp/$1.csr" -CA "$2.crt" -CAkey "$2.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days "$days" -extfile "$4" -out "$1.crt" 2>/dev/null
}

cat > "$tmp/server.ext" <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,IP:127.0.0.1
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
EOF
cat > "$tmp/client.ext" <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
EOF

ca ca "strapd test CA"
leaf server ca localhost "$tmp/server.ext"
leaf client ca strapd-test-client "$tmp/client.ext"
ca rogue-ca "strapd rogue CA"
leaf rogue-server rogue-ca localhost "$tmp/server.ext"

chmod 0600 ./*.key
chmod 0644 ./*.crt
complete || { echo "make_certs: the new certificates do not verify" >&2; exit 1; }
