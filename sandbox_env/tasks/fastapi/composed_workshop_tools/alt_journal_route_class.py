from fastapi import Depends, FastAPI, Form, HTTPException
from fastapi.routing import APIRoute
from fastapi.security import OAuth2PasswordBearer

PASSWORDS = {"ada": "chisel9", "bram": "lathe4"}
SUSPENDED = {"bram"}
TOOLS = ("bandsaw", "drill", "plane")
journal_lines: list[str] = []
borrowed: dict[str, str] = {}


class JournalRoute(APIRoute):
    def get_route_handler(self):
        handler = super().get_route_handler()

        async def journaled(request):
            journal_lines.append(f"begin {request.method} {request.url.path}")
            try:
                return await handler(request)
            finally:
                journal_lines.append(f"end {request.url.path}")

        return journaled


app = FastAPI()
app.router.route_class = JournalRoute
scheme = OAuth2PasswordBearer(tokenUrl="/auth/token")


def current_member(token: str = Depends(scheme)) -> str:
    prefix, _, name = token.partition("-")
    if prefix != "tok" or name not in PASSWORDS:
        raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})
    if name in SUSPENDED:
        raise HTTPException(403, "suspended")
    return name


@app.get("/journal")
def read_journal():
    return list(journal_lines)


@app.post("/auth/token")
def issue(username: str = Form(), password: str = Form()):
    if PASSWORDS.get(username, None) == password:
        return {"access_token": "tok-" + username, "token_type": "bearer"}
    raise HTTPException(400, "wrong name or password")


@app.get("/tools/")
def tools(member: str = Depends(current_member)):
    return [{"name": tool, "free": tool not in borrowed} for tool in TOOLS]


@app.post("/tools/{name}/borrow")
def borrow(name: str, member: str = Depends(current_member)):
    if name not in TOOLS:
        raise HTTPException(404, "no such tool")
    if name in borrowed:
        raise HTTPException(409, "already out")
    borrowed[name] = member
    return {"name": name, "borrower": member}
