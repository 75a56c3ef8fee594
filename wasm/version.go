package main

// Version names the page protocol this host speaks (see docs/web.md).
const Version = "highwater-wasm/1"
