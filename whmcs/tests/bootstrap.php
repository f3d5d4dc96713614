<?php

// Loads the module as WHMCS would, the tests' own classes (namespace Pvebill\Tests, one a file in
// lib/), stand-ins of WHMCS's classes (whmcs/) and the functions the tests share (lib.php).

declare(strict_types=1);

require_once __DIR__ . '/../modules/servers/pvebill/pvebill.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Pvebill\\Tests\\';
    if (str_starts_with($class, $prefix) && is_file(__DIR__ . '/lib/' . substr($class, strlen($prefix)) . '.php')) {
        require __DIR__ . '/lib/' . substr($class, strlen($prefix)) . '.php';
    }
});

// WHMCS's own classes the module uses inside WHMCS (usage billing), as stand-ins with WHMCS's
// names, namespaces and methods: one a file in whmcs/, the path after WHMCS\.
spl_autoload_register(static function (string $class): void {
    $prefix = 'WHMCS\\';
    $file = __DIR__ . '/whmcs/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (str_starts_with($class, $prefix) && is_file($file)) {
        require $file;
    }
});

require_once __DIR__ . '/lib.php';
