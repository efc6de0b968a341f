# Calls redis-rb's Redis::HashRing and Redis::Distributed (Debian ruby-redis) for
# tests/vectors/gen/fleet/gen_clients.py.  stdin: JSON list of cases; stdout: JSON list.
#   {"mode": "distributed", "nodes": [url or {"url":..,"id":..}], "keys": [...]}
#       -> Redis::Distributed.new(nodes).node_for(key).id  (the /^\{(.+?)\}/ tag applies)
#   {"mode": "ring", "ids": [...], "replicas": n|null, "keys": [...]}
#       -> Redis::HashRing.new(nodes with those ids[, replicas]).get_node(key).id
require 'json'
require 'redis'
require 'redis/distributed'

Node = Struct.new(:id)

cases = JSON.parse($stdin.read)
out = cases.map do |c|
  case c['mode']
  when 'distributed'
    nodes = c['nodes'].map { |n| n.is_a?(Hash) ? n.transform_keys(&:to_sym) : n }
    d = Redis::Distributed.new(nodes)
    { 'ids' => d.nodes.map(&:id), 'points' => d.ring.sorted_keys.size,
      'expect' => c['keys'].map { |k| d.node_for(k).id } }
  when 'ring'
    nodes = c['ids'].map { |i| Node.new(i) }
    r = c['replicas'] ? Redis::HashRing.new(nodes, c['replicas']) : Redis::HashRing.new(nodes)
    { 'ids' => c['ids'], 'points' => r.sorted_keys.size,
      'expect' => c['keys'].map { |k| r.get_node(k).id } }
  end
end
out.unshift({ 'version' => Redis::VERSION, 'ruby' => RUBY_VERSION })
puts JSON.generate(out)
