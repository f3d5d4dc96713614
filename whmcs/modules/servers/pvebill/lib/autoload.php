<?php

// Loads the module's classes on first use: namespace Pvebill, one class per file of this folder,
// the file named after the class (no Composer in a WHMCS module folder).

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    $prefix = 'Pvebill\\';
    if (!str_starts_with($class, $prefix)) {
        return;
    }
    $file = __DIR__ . '/' . substr($class, strlen($prefix)) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
