// Calls groupcache's consistenthash (Debian golang-github-golang-groupcache-dev) for
// tests/vectors/gen/fleet/gen_clients.py.  Built with GO111MODULE=off and
// GOPATH=/usr/share/gocode (the Debian source), no network.
// stdin: JSON list of {"replicas": n, "peers": [...], "keys": [...]}; stdout: JSON list
// of {"points": len(keys), "expect": [Get(key)...]}.
package main

import (
	"encoding/json"
	"os"

	"github.com/golang/groupcache/consistenthash"
)

type tcase struct {
	Replicas int      `json:"replicas"`
	Peers    []string `json:"peers"`
	Keys     []string `json:"keys"`
}

type result struct {
	Expect []string `json:"expect"`
}

func main() {
	var cases []tcase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := make([]result, 0, len(cases))
	for _, c := range cases {
		m := consistenthash.New(c.Replicas, nil)
		m.Add(c.Peers...)
		r := result{Expect: make([]string, 0, len(c.Keys))}
		for _, k := range c.Keys {
			r.Expect = append(r.Expect, m.Get(k))
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
