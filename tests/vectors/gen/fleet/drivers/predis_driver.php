<?php
// Calls Predis (Debian php-nrk-predis) for tests/vectors/gen/fleet/gen_clients.py.
// stdin: JSON list of cases; stdout: JSON list.
//   {"mode": "client", "params": ["tcp://host:port?weight=..", ...], "keys": [...]}
//       -> (string) $client->getConnection()->getConnectionByKey($key)   ("host:port")
//          (PredisCluster + PredisStrategy + HashRing; the {tag} rule applies)
//   {"mode": "hashring"|"ketama", "nodes": [[name, weight|null], ...], "keys": [...]}
//       -> (new HashRing())->add(name, weight) ...; ->get($key)   (KetamaRing for "ketama")
require_once '/usr/share/php/Predis/Autoloader.php';
Predis\Autoloader::register();

use Predis\Cluster\Distributor\HashRing;
use Predis\Cluster\Distributor\KetamaRing;

$cases = json_decode(file_get_contents('php://stdin'), true);
$out = array(array('version' => Predis\Client::VERSION, 'php' => PHP_VERSION));
foreach ($cases as $c) {
    $res = array();
    if ($c['mode'] === 'client') {
        $client = new Predis\Client($c['params']);
        $cluster = $client->getConnection();
        foreach ($c['keys'] as $k) {
            $res[] = (string) $cluster->getConnectionByKey($k);
        }
    } else {
        $ring = $c['mode'] === 'ketama' ? new KetamaRing() : new HashRing();
        foreach ($c['nodes'] as $n) {
            $ring->add($n[0], $n[1]);
        }
        foreach ($c['keys'] as $k) {
            $res[] = $ring->get($k);
        }
    }
    $out[] = array('expect' => $res);
}
echo json_encode($out, JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES), "\n";
