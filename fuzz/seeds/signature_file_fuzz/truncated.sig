agentsdb layer signature
version: 1
algorithm: ed25519
key-id: 21fe31dfa154a261
layer-size: 4
layer-sha256: 110e9ef9a395072d22014bcdcbbe69368af34fbfa16e9d6036518534c6adc489
signature: c66b00e494426dfa