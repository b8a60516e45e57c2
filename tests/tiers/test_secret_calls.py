"""Credentials handed to a call by position, to a command's own option, after a directive's blank,
and in SQL's and Oracle's other forms (issue 12, 2026-12-07;
the forms come from the independent sweep of ``test_secret_forms_outside``). The positive forms
are also syntaxes of ``secret_corpus`` (every value set of ``test_secrets`` runs through them);
here: setters judged by their name, and the near shapes that must stay clean."""

from __future__ import annotations

import random
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier

from .test_secrets import covered, secret_spans

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _values() -> st.SearchStrategy[str]:
    def make(seed: int) -> str:
        rnd = random.Random(seed)
        return "k" + "".join(rnd.choice(string.ascii_letters + string.digits + "!@#%^*+-_.") for _ in range(20)) + "Q7"

    return st.integers(0, 2**32).map(make)


@_SETTINGS
@given(
    st.sampled_from(["Password", "ApiKey", "ClientSecret", "AuthToken", "AccessToken", "SecretKey", "DbPassword"]),
    st.sampled_from(["set", "with", "With", ""]),
    _values(),
)
def test_a_setter_named_after_a_credential_takes_one(clf: Classifier, name: str, verb: str, value: str) -> None:
    """A setter (``setPassword``) or a builder's method (``.apiKey(…)``) named after a credential."""
    name = name if verb else name[0].lower() + name[1:]
    text = f'builder.{verb}{name}("{value}");'
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), text


@_SETTINGS
@given(
    st.sampled_from(["Name", "Timeout", "Title", "Url", "TokenizerName", "PasswordPolicy", "KeyType", "CacheKey"]),
    st.sampled_from(["set", "with", "get", "tokenize", ""]),
    _values(),
)
def test_a_setter_of_anything_else_takes_none(clf: Classifier, name: str, verb: str, value: str) -> None:
    text = f'builder.{verb}{name}("{value}");'
    assert not secret_spans(clf, text), text


_CLEAN = [
    'ds.setPassword(System.getenv("DB_PASSWORD"));',
    'ds.setPassword("changeme");',
    'client.setApiKey("YOUR_API_KEY");',
    'requests.get(url, auth=("user", password))',
    'auth = HTTPBasicAuth(user, os.environ["PW"])',
    'login("Welcome back", "Please sign in to continue")',
    "server.login(user, pw)",
    "cy.get('#password').type('{enter}')",
    "cy.get('#password').should('have.value', '')",
    "page.fill('#password', process.env.PW)",
    "page.fill('#username', 'alice.smith')",
    'driver.find_element(By.ID, "username").send_keys("alice")',
    "DriverManager.getConnection(url, user, password);",
    "redis-cli -a $REDIS_PASSWORD ping",
    "redis-cli -h cache ping",
    "mongosh --port 27017 -p",
    "htpasswd -c .htpasswd admin",
    "keytool -list -keystore app.jks -storepass:env STOREPASS",
    "aws configure set region eu-west-1",
    "echo hello | sudo -S true",
    "echo $TOKEN | gh auth login --with-token",
    "wpa_passphrase MyNetwork",
    # a blank between a setting and its value; SQL and Oracle's other forms
    "ENV DB_PASSWORD changeme",
    "ENV API_TOKEN_FILE /run/secrets/token",
    "proxy_set_header Authorization $http_authorization;",
    'setx PATH "%PATH%;C:\\bin"',
    "CREATE USER app IDENTIFIED BY VALUES 'S:ABC';",
    "CREATE USER app IDENTIFIED BY pw_variable_name;",
    "SET PASSWORD = 'changeme';",
    "jdbc:oracle:thin:@dbhost:1521:ORCL",
    "sqlplus /nolog",
    "sqlplus scott/$PASSWORD@orcl",
    "vault login -method=github",
    "vault login $VAULT_TOKEN",
    'sql.Open("mysql", dsn)',
    "if x <- y",
    'map.getKey("Xk9fQ2mLp7Rt4vB8nW3zY6cH")',
    'KeyVaultSecret secret = client.GetSecret("db-password");',
    'encoding = ir.DIToken("DW_ATE_signed")',
    'lang = ir.DIToken("DW_LANG_Python")',
    "const confirmed = await readUserInfo.password('       Again:     ')",
    'token = auth.refreshToken("Xk9fQ2mLp7Rt4vB8nW3zY6cH")',
    'ok = hasher.verifyPassword("Xk9fQ2mLp7Rt4vB8nW3zY6cH")',
    # a locked account's shadow line, a passwd line, a price
    "root:*:19700:0:99999:7:::",
    "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
    "price:$5$ for two",
    # a help text's name for the value; a command whose output is the value
    "  -p, --password TEXT  Database password",
    "  --token STRING       the token to send",
    "export API_KEY=`cat ~/.secrets/api_key`",
    "TOKEN=`gcloud auth print-access-token`",
]


@_SETTINGS
@given(st.sampled_from(_CLEAN))
def test_a_variable_a_placeholder_or_another_field_is_no_credential(clf: Classifier, text: str) -> None:
    assert not secret_spans(clf, text), text


@_SETTINGS
@given(st.sampled_from(["echo '{v}' | sudo -S apt update", 'echo "{v}" | gh auth login --with-token',
                        "echo {v} | docker login --password-stdin -u me registry.acme.test"]), _values())  # fmt: skip
def test_a_password_piped_to_a_prompt_is_found(clf: Classifier, template: str, value: str) -> None:
    text = template.format(v=value)
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), text


_CRYPT = string.ascii_letters + string.digits + "./"


@_SETTINGS
@given(
    st.sampled_from(
        ["{u}:$apr1${s}${h}", "{u}:$2y$05${s}{h}", "{u}:$6${s}${h}:19700:0:99999:7:::", "{u}:$y$j9T${s}${h}"]
    ),
    st.sampled_from(["admin", "deploy", "root", "www-data", "j.doe"]),
    st.integers(0, 2**32),
)
def test_a_password_hash_after_its_user_is_a_secret(clf: Classifier, template: str, user: str, seed: int) -> None:
    """A ``.htpasswd`` or ``/etc/shadow`` line's hash: cracked offline, it is as good as the password."""
    rnd = random.Random(seed)
    salt = "".join(rnd.choice(_CRYPT) for _ in range(rnd.randint(8, 22)))
    digest = "".join(rnd.choice(_CRYPT) for _ in range(rnd.randint(22, 86)))
    text = template.format(u=user, s=salt, h=digest)
    s = text.index("$")
    e = text.index(digest) + len(digest)
    assert covered(secret_spans(clf, text), s, e), text


@_SETTINGS
@given(_values(), st.sampled_from(["\r\n", "\n"]))
def test_a_netrc_entry_over_lines_is_read_with_either_line_ending(clf: Classifier, value: str, eol: str) -> None:
    """A ``.netrc`` pasted from Windows (CRLF) is the same entry."""
    value = value.replace("#", "x")
    text = eol.join(["machine ftp.acme.test", "  login bob", f"  password {value}", ""])
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), text
