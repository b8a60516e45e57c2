"""Hand-written material for the secret tests and the per-family figures in bench/RESULTS.md:
credential syntaxes (a template with ``{v}`` where the value goes), carriers for provider
tokens, placeholders that are not secrets, and code that must stay clean.

Nothing here is copied from another scanner's rules or samples; tokens are generated from the
shapes in ``tiers.recognizers.secrets._table``.
"""

from __future__ import annotations

# (syntax, template, characters the value may not hold in it)
SYNTAXES: list[tuple[str, str, str]] = [
    ("dotenv", "DB_PASSWORD={v}\n", " \t\n'\"`"),
    ("dotenv quoted", 'DB_PASSWORD="{v}"\n', '"\\\n'),
    ("shell export", "export API_TOKEN={v}\n", " \t\n'\"`"),
    ("shell export quoted", "export API_TOKEN='{v}'\n", "'\n"),
    ("yaml", "database:\n  password: {v}\n", "#\n'\"`"),
    ("yaml quoted", 'database:\n  password: "{v}"\n', '"\\\n'),
    ("json", '{{"user": "app", "password": "{v}"}}', '"\\\n'),
    ("toml", '[db]\npassword = "{v}"\n', '"\\\n'),
    ("ini", "[client]\npassword = {v}\n", "#;\n'\"`"),
    ("java properties", "spring.datasource.password={v}\n", " \n'\"`"),
    ("xml element", "<settings><password>{v}</password></settings>", "<>&\n"),
    ("xml attribute pair", '<add key="DbPassword" value="{v}"/>', '"<>&\n'),
    ("k8s secret (plain key)", "kind: Secret\ndata:\n  password: {v}\n", "#\n'\"`"),
    ("docker-compose env", "services:\n  db:\n    environment:\n      - POSTGRES_PASSWORD={v}\n", " \n'\"`"),
    ("docker-compose map", "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: {v}\n", "#\n'\"`"),
    ("terraform", 'resource "x" "y" {{\n  password = "{v}"\n}}\n', '"\\\n$'),
    ("go :=", 'apiKey := "{v}"\n', '"\\\n'),
    ("python", 'SECRET_KEY = "{v}"\n', '"\\\n'),
    ("python kwarg", 'connect(host="db", password="{v}")\n', '"\\\n'),
    ("javascript", "const apiKey = '{v}';\n", "'\\\n"),
    ("js object", "const cfg = {{ clientSecret: \"{v}\" }};\n", '"\\\n'),
    ("java", 'private static final String DB_PASSWORD = "{v}";\n', '"\\\n'),
    ("c#", 'var connectionPassword = @"{v}";\n', '"\n'),
    ("php array", "'password' => '{v}',\n", "'\\\n"),
    ("jdbc query", "jdbc:postgresql://db:5432/app?user=app&password={v}\n", " \n&;#'\"`"),
    ("ado.net", "Server=db;Database=app;User Id=app;Password={v};\n", " \n;'\"`"),
    ("curl -u", "curl -u deploy:{v} https://ci.internal.test/api\n", " \n:'\"`@"),
    ("mysql -p", "mysql -h db -u root -p{v} app\n", " \n'\"`"),
    ("--password flag", "tool sync --password {v} --verbose\n", " \n'\"`"),
    (".netrc", "machine api.internal.test login deploy password {v}\n", " \n"),
    (".pgpass", "db.internal.test:5432:app:deploy:{v}\n", " \n:\\"),
    ("aws credentials", "[default]\naws_access_key_id = AKIAZ3MPLE7QW2RT4YUI\naws_secret_access_key = {v}\n", " \n#;'\"`"),
    ("azure env", "AZURE_CLIENT_SECRET={v}\n", " \n'\"`"),
    ("url userinfo", "amqp://worker:{v}@mq.internal.test:5672/\n", " \n:@/'\"`<>#?"),
    ("authorization bearer", "Authorization: Bearer {v}\n", " \n'\"`,"),
    ("header x-api-key", "X-Api-Key: {v}\n", " \n#'\"`"),
]

# provider-token carriers: a token in each of these is found whole
CARRIERS: list[tuple[str, str]] = [
    ("key:", "key: {t}"),
    ("prose", "the deploy used {t} yesterday, rotate it"),
    ("bearer", "Authorization: Bearer {t}"),
    ("double-quoted", 'value = "{t}"'),
    ("single-quoted", "value = '{t}'"),
    ("unquoted", "VALUE={t}"),
    ("go :=", 'v := "{t}"'),
    ("xml", "<value>{t}</value>"),
    ("json", '{{"value": "{t}"}}'),
    ("end of line", "x\n{t}\ny"),
]

PLACEHOLDERS: list[str] = [
    "changeme", "change_me", "${DB_PASSWORD}", "${{ secrets.TOKEN }}", "{{ vault_password }}",
    "<your-key>", "<YOUR_API_KEY>", "xxxx", "xxxxxxxxxxxxxxxx", "XXXXXXXX", "****", "********",
    "example", "dummy", "your-api-key-here", "your_secret_here", "insert-token-here", "$API_KEY",
    "%DB_PASSWORD%", "%(password)s", "null", "none", "true", "redacted", "[REDACTED]", "placeholder",
    "os.environ['PW']", "process.env.TOKEN", "dummy-token", "example_password", "test",
]

# code and config that mention credentials without holding one
CLEAN_CODE: list[str] = [
    "token = get_token()",
    "password = request.form['password']",
    "def check_password(password: str) -> bool:",
    "    token: Optional[str] = None",
    "max_tokens: 4096",
    "num_tokens = len(tokenizer.encode(text))",
    "token_type: bearer",
    "password_min_length: 12",
    "if password == confirm_password:",
    "secret_name: prod-db-credentials",
    "auth: true",
    "self.api_key = api_key",
    "const token = await getToken();",
    "apiKey: process.env.API_KEY,",
    "password: string;",
    "PASSWORD_RESET_URL = '/accounts/reset/'",
    "<password>${db.password}</password>",
    "spring.datasource.password=${DB_PASSWORD}",
    "curl -u $USER:$PASS https://example.com",
    "mysql -u root -p",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "the token expired yesterday; ask for a new one",
    "The password policy requires 12 characters.",
    "bypass: compass",
    "passenger_count: 3",
    "author: Jane",
    "path: /usr/local/bin",
    "credentials_file: ~/.aws/credentials",
    "aws_access_key_id = AKIAXXXXXXXXXXXXXXXX",
    "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "sk_live_****************************",
    "token_url: https://auth.example.com/oauth/token",
    "signature = hmac.new(key, msg, hashlib.sha256).hexdigest()",
    "  image: nginx:1.25",
    "  name: frontend",
]
