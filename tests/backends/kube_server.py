"""A loopback Kubernetes API server for the kubernetes backend's tests. It is NOT a cluster: no
scheduler, kubelet or container runtime. It speaks the parts of the real API the backend uses, as the
real API server does (JSON over HTTP, bearer-token auth, ``Status`` errors, watch as JSON lines, exec
over a websocket with the ``v5.channel.k8s.io`` / ``v4.channel.k8s.io`` channel protocol), and stands
in for the kubelet by "running" each Pod as a directory whose commands run under bubblewrap with that
directory as ``/workspace`` and ``/tmp``. With ``sandbox_crd`` it also serves agent-sandbox's
``Sandbox`` resource and, like its controller, makes a Pod of the same name for each one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")


def status(code: int, reason: str, message: str) -> web.Response:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    return web.json_response(body, status=code)


class LoopbackApiServer:
    def __init__(self, token: str, *, sandbox_crd: bool = False) -> None:
        self.token = token
        self.sandbox_crd = sandbox_crd
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.sandboxes: dict[tuple[str, str], dict[str, Any]] = {}
        self.policies: dict[tuple[str, str], dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.exec_protocols: list[str] = []
        self.root = Path(tempfile.mkdtemp(prefix="kube-loopback-"))
        self._watchers: list[asyncio.Queue[dict[str, Any]]] = []
        self._procs: dict[tuple[str, str], set[asyncio.subprocess.Process]] = {}
        self._runner: web.AppRunner | None = None
        self.port = 0

    # --- serving ------------------------------------------------------------------------------------

    async def start(self, port: int = 0) -> None:
        app = web.Application(middlewares=[self._auth])
        ns = "/api/v1/namespaces/{ns}"
        sb = "/apis/agents.x-k8s.io/v1beta1"
        app.router.add_get("/version", self._version)
        app.router.add_get("/version/", self._version)
        app.router.add_post(ns + "/pods", self._create_pod)
        app.router.add_get(ns + "/pods", self._list_pods)
        app.router.add_get(ns + "/pods/{name}", self._get_pod)
        app.router.add_delete(ns + "/pods/{name}", self._delete_pod)
        app.router.add_get(ns + "/pods/{name}/exec", self._exec)
        app.router.add_post("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies", self._create_policy)
        app.router.add_get(sb + "/", self._sandbox_discovery)
        app.router.add_get(sb, self._sandbox_discovery)
        app.router.add_post(sb + "/namespaces/{ns}/sandboxes", self._create_sandbox)
        app.router.add_delete(sb + "/namespaces/{ns}/sandboxes/{name}", self._delete_sandbox)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)  # stop() cuts open connections
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        """Stop answering (the API server is gone); pods and their files stay, as on a cluster."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def close(self) -> None:
        await self.stop()
        for procs in self._procs.values():
            for proc in procs:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    def kubeconfig(self, path: Path, namespace: str = "lanes") -> Path:
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": "loop",
            "clusters": [{"name": "loop", "cluster": {"server": f"http://127.0.0.1:{self.port}"}}],
            "users": [{"name": "u", "user": {"token": self.token}}],
            "contexts": [
                {"name": "loop", "context": {"cluster": "loop", "user": "u", "namespace": namespace}}
            ],
        }  # fmt: skip
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        return path

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return status(401, "Unauthorized", "Unauthorized")
        return await handler(request)

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"major": "1", "minor": "31", "gitVersion": "v1.31.0-loopback"})

    # --- pods ---------------------------------------------------------------------------------------

    def _emit(self, kind: str, pod: dict[str, Any]) -> None:
        for queue in self._watchers:
            queue.put_nowait({"type": kind, "object": pod})

    async def _create_pod(self, request: web.Request) -> web.Response:
        body = await request.json()
        return self._add_pod(request.match_info["ns"], body)

    def _add_pod(self, ns: str, body: dict[str, Any]) -> web.Response:
        name = body["metadata"]["name"]
        if (ns, name) in self.pods:
            return status(409, "AlreadyExists", f'pods "{name}" already exists')
        pod = {**body, "metadata": {**body["metadata"], "namespace": ns}, "status": {"phase": "Pending"}}
        self.pods[(ns, name)] = pod
        asyncio.get_running_loop().call_soon(self._start_pod, ns, name)
        return web.json_response(pod, status=201)

    def _start_pod(self, ns: str, name: str) -> None:
        """The kubelet's part: the pod's filesystem, then Running."""
        pod = self.pods.get((ns, name))
        if pod is None:
            return
        for sub in ("workspace", "tmp"):
            (self.root / ns / name / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root / ns / name / "tmp", 0o1777)
        pod["status"] = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        self._emit("MODIFIED", pod)

    async def _get_pod(self, request: web.Request) -> web.Response:
        pod = self.pods.get((request.match_info["ns"], request.match_info["name"]))
        if pod is None:
            return status(404, "NotFound", f'pods "{request.match_info["name"]}" not found')
        return web.json_response(pod)

    async def _list_pods(self, request: web.Request) -> web.StreamResponse:
        ns = request.match_info["ns"]
        wanted = request.query.get("fieldSelector", "").removeprefix("metadata.name=")
        items = [p for (n, name), p in self.pods.items() if n == ns and (not wanted or name == wanted)]
        if request.query.get("watch") != "true":
            return web.json_response({"kind": "PodList", "apiVersion": "v1", "items": items})
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._watchers.append(queue)
        try:
            for pod in items:
                await response.write(json.dumps({"type": "ADDED", "object": pod}).encode() + b"\n")
            while True:
                event = await queue.get()
                if not wanted or event["object"]["metadata"]["name"] == wanted:
                    await response.write(json.dumps(event).encode() + b"\n")
        finally:
            self._watchers.remove(queue)

    async def _delete_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        pod = self.delete_pod(ns, name)
        if pod is None:
            return status(404, "NotFound", f'pods "{name}" not found')
        return web.json_response(pod)

    def delete_pod(self, ns: str, name: str) -> dict[str, Any] | None:
        """Delete a pod (also what an eviction does): its processes and files go."""
        pod = self.pods.pop((ns, name), None)
        for proc in self._procs.pop((ns, name), set()):
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        shutil.rmtree(self.root / ns / name, ignore_errors=True)
        if pod is not None:
            self._emit("DELETED", pod)
        return pod

    # --- exec ---------------------------------------------------------------------------------------

    async def _exec(self, request: web.Request) -> web.StreamResponse:
        ns, name = request.match_info["ns"], request.match_info["name"]
        pod = self.pods.get((ns, name))
        if pod is None or pod["status"]["phase"] != "Running":
            return status(404, "NotFound", f'pods "{name}" not found')
        command = request.query.getall("command")
        ws = web.WebSocketResponse(protocols=PROTOCOLS)
        await ws.prepare(request)
        self.exec_protocols.append(ws.ws_protocol or "")
        home = self.root / ns / name
        argv = ["bwrap", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for top in ("/bin", "/sbin", "/lib", "/lib64"):
            if os.path.islink(top):
                argv += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                argv += ["--ro-bind", top, top]
        argv += ["--bind", str(home / "tmp"), "/tmp", *self._volume_binds(pod, home)]
        argv += [
            "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "--die-with-parent",
            "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--chdir", "/", "--", *command,
        ]  # fmt: skip
        wants_stdin = request.query.get("stdin") == "true"
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE if wants_stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        self._procs.setdefault((ns, name), set()).add(proc)

        async def pump(stream: asyncio.StreamReader, channel: int) -> None:
            while data := await stream.read(65536):
                await ws.send_bytes(bytes([channel]) + data)

        async def feed() -> None:
            async for msg in ws:
                if msg.type != WSMsgType.BINARY or not msg.data:
                    continue
                if msg.data[0] == 0 and proc.stdin is not None:
                    proc.stdin.write(msg.data[1:])
                    with contextlib.suppress(ConnectionError):
                        await proc.stdin.drain()
                elif msg.data[:2] == b"\xff\x00" and proc.stdin is not None:
                    proc.stdin.close()

        feeder = asyncio.create_task(feed())
        try:
            assert proc.stdout is not None and proc.stderr is not None
            await asyncio.gather(pump(proc.stdout, 1), pump(proc.stderr, 2))
            code = await proc.wait()
            if code == 0:
                result: dict[str, Any] = {"metadata": {}, "status": "Success"}
            else:
                result = {
                    "metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
                    "message": f"command terminated with non-zero exit code: exit status {code}",
                    "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
                }  # fmt: skip
            if not ws.closed:
                await ws.send_bytes(b"\x03" + json.dumps(result).encode())
        except ConnectionError:
            pass
        finally:
            feeder.cancel()
            self._procs.get((ns, name), set()).discard(proc)
            await ws.close()
        return ws

    @staticmethod
    def _volume_binds(pod: dict[str, Any], home: Path) -> list[str]:
        """The kubelet's volume mounts: the ``workspace`` emptyDir (the Pod's directory) and any other
        ``emptyDir`` volume, each at every ``mountPath`` the lane container names."""
        container = (pod.get("spec", {}).get("containers") or [{}])[0]
        binds: list[str] = []
        for mount in container.get("volumeMounts") or [{"name": "workspace", "mountPath": "/workspace"}]:
            name = str(mount["name"])
            source = home / ("workspace" if name == "workspace" else f"volume-{name}")
            source.mkdir(parents=True, exist_ok=True)
            binds += ["--bind", str(source), str(mount["mountPath"])]
        return binds

    # --- network policies and agent-sandbox ---------------------------------------------------------

    async def _create_policy(self, request: web.Request) -> web.Response:
        body = await request.json()
        key = (request.match_info["ns"], body["metadata"]["name"])
        if key in self.policies:
            return status(409, "AlreadyExists", "networkpolicies already exists")
        self.policies[key] = body
        return web.json_response(body, status=201)

    async def _sandbox_discovery(self, request: web.Request) -> web.Response:
        if not self.sandbox_crd:
            return status(404, "NotFound", "the server could not find the requested resource")
        return web.json_response(
            {"kind": "APIResourceList", "groupVersion": "agents.x-k8s.io/v1beta1",
             "resources": [{"name": "sandboxes", "namespaced": True, "kind": "Sandbox"}]}
        )  # fmt: skip

    async def _create_sandbox(self, request: web.Request) -> web.Response:
        if not self.sandbox_crd:
            return status(404, "NotFound", "the server could not find the requested resource")
        body = await request.json()
        ns, name = request.match_info["ns"], body["metadata"]["name"]
        self.sandboxes[(ns, name)] = body
        template = body["spec"]["podTemplate"]
        self._add_pod(
            ns, {"metadata": {"name": name, **template.get("metadata", {})}, "spec": template["spec"]}
        )
        return web.json_response(body, status=201)

    async def _delete_sandbox(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        body = self.sandboxes.pop((ns, name), None)
        if body is None:
            return status(404, "NotFound", f'sandboxes "{name}" not found')
        self.delete_pod(ns, name)
        return web.json_response(body)
