// helm-render is built in GOPATH mode against Debian's packaged sources, not as a module:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o /tmp/helm-render .
//
// Debian packages: golang-go golang-github-masterminds-sprig-dev golang-gopkg-yaml.v3-dev.
// This file only names the program; module mode (which would download) is not used.
module dispatch/tools/helm-render

go 1.19
