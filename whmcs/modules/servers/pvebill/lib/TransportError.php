<?php

// A failed transport of the signed client (Client.php).

declare(strict_types=1);

namespace Pvebill;

/** The request could not be sent or no answer arrived (connection refused, timeout, TLS). */
final class TransportError extends \RuntimeException
{
}
