<?php

// Minimal stand-ins for the FOSSBilling classes a server manager meets, with FOSSBilling's own
// names and signatures (src/library/Server/*.php in FOSSBilling): the abstract Server_Manager
// (its constructor copies the server's fields into $_config, then calls init()), the account,
// package and client objects it is handed, and Server_Exception. Only what the manager uses is
// here; nothing of pvebill's module is.

declare(strict_types=1);

class Server_Exception extends Exception
{
}

abstract class Server_Manager
{
    protected array $_config = [
        'ip' => null,
        'host' => null,
        'secure' => false,
        'username' => null,
        'password' => null,
        'accesshash' => null,
        'config' => null,
        'port' => null,
        'passwordLength' => null,
    ];

    public function __construct(array $options)
    {
        foreach (['ip', 'host', 'username', 'password', 'accesshash', 'passwordLength', 'config', 'port'] as $k) {
            if (isset($options[$k])) {
                $this->_config[$k] = $options[$k];
            }
        }
        if (isset($options['secure'])) {
            $this->_config['secure'] = (bool) $options['secure'];
        }
        $this->init();
    }

    protected function init()
    {
    }

    abstract public function getLoginUrl(?Server_Account $account);

    abstract public function getResellerLoginUrl(?Server_Account $account);

    abstract public function testConnection();

    abstract public function createAccount(Server_Account $account);

    abstract public function synchronizeAccount(Server_Account $account);

    abstract public function suspendAccount(Server_Account $account);

    abstract public function unsuspendAccount(Server_Account $account);

    abstract public function cancelAccount(Server_Account $account);

    abstract public function changeAccountPassword(Server_Account $account, string $newPassword);

    abstract public function changeAccountUsername(Server_Account $account, string $newUsername);

    abstract public function changeAccountDomain(Server_Account $account, string $newDomain);

    abstract public function changeAccountIp(Server_Account $account, string $newIp);

    abstract public function changeAccountPackage(Server_Account $account, Server_Package $package);
}

class Server_Client
{
    private ?int $id = null;

    public function getId(): ?int
    {
        return $this->id;
    }

    public function setId(int $id): static
    {
        $this->id = $id;
        return $this;
    }
}

class Server_Package
{
    private ?string $name = 'FOSSBilling';
    private array $custom = [];

    public function getName(): ?string
    {
        return $this->name;
    }

    public function setName(?string $name): static
    {
        $this->name = $name;
        return $this;
    }

    public function setCustomValues(array $param): static
    {
        $this->custom = $param;
        return $this;
    }

    public function getCustomValue(string $param): ?string
    {
        return $this->custom[$param] ?? null;
    }
}

class Server_Account
{
    private ?string $username = null;
    private ?string $password = null;
    private ?string $domain = null;
    private ?string $ip = null;
    private ?Server_Client $client = null;
    private ?Server_Package $package = null;
    private ?bool $suspended = null;

    public function getUsername(): ?string
    {
        return $this->username;
    }

    public function setUsername(?string $username): static
    {
        $this->username = $username;
        return $this;
    }

    public function getPassword(): ?string
    {
        return $this->password;
    }

    public function setPassword(?string $password): static
    {
        $this->password = $password;
        return $this;
    }

    public function getDomain(): ?string
    {
        return $this->domain;
    }

    public function setDomain(?string $domain): static
    {
        $this->domain = $domain;
        return $this;
    }

    public function getIp(): ?string
    {
        return $this->ip;
    }

    public function setIp(?string $ip): static
    {
        $this->ip = $ip;
        return $this;
    }

    public function getClient(): ?Server_Client
    {
        return $this->client;
    }

    public function setClient(?Server_Client $client): static
    {
        $this->client = $client;
        return $this;
    }

    public function getPackage(): Server_Package
    {
        return $this->package;
    }

    public function setPackage(?Server_Package $package): static
    {
        $this->package = $package;
        return $this;
    }

    public function getSuspended(): ?bool
    {
        return $this->suspended;
    }

    public function setSuspended(bool $suspended): static
    {
        $this->suspended = $suspended;
        return $this;
    }
}
