<?php

// The module's own words in the customer's (or the admin's) language: WHMCS-style language files
// (lang/<WHMCS language name>.php, each filling $_LANG with "pvebill_…" keys), English first and
// the chosen language over it, so that a key a file lacks still reads in English. The same
// language goes to pvebill as Accept-Language, so that its details match the page around them.

declare(strict_types=1);

namespace Pvebill;

final class Lang
{
    public const FALLBACK = 'english';

    /** WHMCS language names → pvebill's languages (its Accept-Language); anything else is English. */
    public const CODES = [
        'english' => 'en', 'german' => 'de', 'spanish' => 'es', 'french' => 'fr', 'italian' => 'it',
        'dutch' => 'nl', 'polish' => 'pl', 'portuguese-pt' => 'pt', 'portuguese-br' => 'pt',
        'turkish' => 'tr',
    ];

    /** WHMCS language names that read another name's file. */
    private const ALIASES = ['portuguese-br' => 'portuguese-pt'];

    /** @var array<string, array<string,string>> the files read in this request, by name */
    private static array $loaded = [];

    /** @param array<string,string> $texts */
    private function __construct(private readonly string $name, private readonly array $texts)
    {
    }

    /** The folder of the language files. */
    public static function dir(): string
    {
        return dirname(__DIR__) . '/lang';
    }

    /**
     * A language by its WHMCS name ("german", "portuguese-br"; any case); a name without a file
     * of its own is English.
     */
    public static function named(string $name): self
    {
        $name = strtolower(trim($name));
        $file = self::ALIASES[$name] ?? $name;
        if (!preg_match('/^[a-z][a-z-]*$/', $file) || !is_file(self::dir() . '/' . $file . '.php')) {
            $name = $file = self::FALLBACK;
        }
        $texts = self::read(self::FALLBACK);
        if ($file !== self::FALLBACK) {
            $texts = array_replace($texts, self::read($file));
        }
        return new self($name, $texts);
    }

    /**
     * The client's language, as WHMCS hands it to the module: the client's own setting
     * (clientsdetails.language), else the language chosen in this session, else English.
     */
    public static function forClient(array $params): self
    {
        $name = (string) ($params['clientsdetails']['language'] ?? '');
        if (trim($name) === '' && isset($_SESSION['Language']) && is_string($_SESSION['Language'])) {
            $name = $_SESSION['Language'];
        }
        return self::named($name);
    }

    /** The admin's language (WHMCS keeps it in the admin session), else English. */
    public static function forAdmin(): self
    {
        $name = $_SESSION['adminlang'] ?? '';
        return self::named(is_string($name) ? $name : '');
    }

    /** @return array<string,string> the keys and texts of one language file alone */
    public static function read(string $name): array
    {
        if (!isset(self::$loaded[$name])) {
            self::$loaded[$name] = (static function (string $file): array {
                $_LANG = [];
                include $file;
                return $_LANG;
            })(self::dir() . '/' . $name . '.php');
        }
        return self::$loaded[$name];
    }

    /** The WHMCS language name in use ("english" when the client's has no file). */
    public function name(): string
    {
        return $this->name;
    }

    /** pvebill's language for Accept-Language. */
    public function code(): string
    {
        return self::CODES[$this->name] ?? 'en';
    }

    /**
     * The text of $key ("pvebill_" may be left off) with {name} placeholders filled in; an
     * unknown key is itself, so that a missing text shows instead of vanishing.
     *
     * @param array<string,string|int> $vars
     */
    public function t(string $key, array $vars = []): string
    {
        $key = str_starts_with($key, 'pvebill_') ? $key : 'pvebill_' . $key;
        $text = $this->texts[$key] ?? $key;
        $pairs = [];
        foreach ($vars as $k => $v) {
            $pairs['{' . $k . '}'] = (string) $v;
        }
        return strtr($text, $pairs);
    }

    /** @return array<string,string> every text, for the templates ({$_lang.pvebill_…}) */
    public function all(): array
    {
        return $this->texts;
    }
}
