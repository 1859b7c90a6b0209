"""The ``kubernetes`` backend: one Pod per lane (or an agent-sandbox ``Sandbox`` when that CRD is
installed) in the namespace of the kubeconfig context, through ``kr8s`` (docs/remote.md says why).

Commands run through the API's exec stream (a websocket speaking the ``v5.channel.k8s.io`` channel
protocol, ``v4`` as fallback: stdin on channel 0, stdout 1, stderr 2, the exit status as JSON on 3,
and on v5 a close of stdin as ``255, 0``); files and snapshots use the same snippets and git-bundle
protocol as the container backend. The Pod runs as a non-root user with every capability dropped, no
service-account token, no service links and (by default) a NetworkPolicy denying it all traffic; the
kubeconfig and its credentials stay on this machine. A lane's Pod is deleted only after a last
snapshot was fetched (:meth:`KubernetesBackend.destroy`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import httpx
import httpx_ws
import kr8s
import kr8s.asyncio

from paragents.backend_settings import KubernetesSettings
from paragents.backends import scripts
from paragents.backends.base import (
    BackendError,
    BackendKind,
    BackendUnreachable,
    Health,
    LaneGone,
    LaneSpec,
    Placement,
    Snapshot,
)
from paragents.backends.bundle import last_snapshot
from paragents.backends.container import LABEL, REPO_LABEL
from paragents.backends.remote import Chunk, RemoteBackend, Stdin
from paragents.lanes.repo import project_hash

SANDBOX_GROUP = "agents.x-k8s.io"
SANDBOX_VERSION = "v1beta1"
POLICY_NAME = "paragents-lanes-deny-all"
EXEC_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, STATUS, CLOSE = 0, 1, 2, 3, 255
_NAME_OK = re.compile(r"[^a-z0-9-]")
UNREACHABLE_ERRORS = (httpx.TransportError, httpx_ws.WebSocketNetworkError, OSError, TimeoutError)


def pod_name(spec: LaneSpec) -> str:
    """``paragents-<repo hash>-<lane>`` as a DNS label (lower case, at most 63 characters)."""
    lane = _NAME_OK.sub("-", spec.name.lower()).strip("-")
    return f"paragents-{project_hash(spec.repo)}-{lane}"[:63].rstrip("-")


def pod_spec(
    spec: LaneSpec, settings: KubernetesSettings, image: str, placement: Placement | None = None
) -> dict[str, Any]:
    """The PodSpec of a lane (see the module docstring); a ``placement``'s aliases mount the workspace
    volume again, its empty directories are ``emptyDir`` volumes."""
    uid = settings.run_as_user
    env = {"HOME": scripts.HOME, **spec.env}
    place = placement or Placement()
    mounts = [{"name": "workspace", "mountPath": scripts.WORKSPACE}]
    mounts += [{"name": "workspace", "mountPath": alias} for alias in place.aliases]
    volumes: list[dict[str, Any]] = [{"name": "workspace", "emptyDir": {}}]
    for i, path in enumerate(place.empty_dirs, 1):
        mounts.append({"name": f"scratch-{i}", "mountPath": path})
        volumes.append({"name": f"scratch-{i}", "emptyDir": {}})
    return {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "restartPolicy": "Never",
        "nodeSelector": dict(settings.node_selector),
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": uid,
            "runAsGroup": uid,
            "fsGroup": uid,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "lane",
                "image": image,
                "command": ["sleep", "infinity"],
                "workingDir": scripts.WORKSPACE,
                "env": [{"name": k, "value": v} for k, v in env.items()],
                "resources": {"requests": dict(settings.requests), "limits": dict(settings.limits)},
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "privileged": False,
                    "capabilities": {"drop": ["ALL"]},
                },
                "volumeMounts": mounts,
            }
        ],
        "volumes": volumes,
    }


class KubernetesBackend(RemoteBackend):
    """One lane in one Pod (see the module docstring)."""

    kind: BackendKind = "kubernetes"

    def __init__(
        self, spec: LaneSpec, settings: KubernetesSettings, image: str, *, placement: Placement | None = None
    ) -> None:
        super().__init__(spec, max_snapshot_bytes=settings.max_snapshot_bytes)
        self.settings = settings
        self.image = image
        self.placement = placement or Placement()
        self.name = pod_name(spec)
        self._api: Any = None
        self.namespace = settings.namespace or ""
        self.uses_sandbox = False

    @property
    def where(self) -> str:
        return f"pod {self.namespace or '?'}/{self.name}"

    # --- the API ----------------------------------------------------------------------------------

    async def api(self) -> Any:
        if self._api is None:
            async with self._cluster("reading the kubeconfig"):
                try:
                    self._api = await kr8s.asyncio.api(
                        kubeconfig=self.settings.kubeconfig, context=self.settings.context,
                        namespace=self.settings.namespace,
                    )  # fmt: skip
                except (ValueError, KeyError, FileNotFoundError) as exc:
                    raise BackendError(f"cannot use the kubeconfig: {exc}") from exc
                except kr8s.ServerError as exc:
                    raise BackendError(f"the cluster's API server refused paragents: {exc}") from exc
            self.namespace = self.settings.namespace or self._api.namespace or "default"
        return self._api

    @contextlib.asynccontextmanager
    async def _cluster(self, what: str, *, gone_ok: bool = False) -> AsyncIterator[None]:
        try:
            yield
        except kr8s.ServerError as exc:
            status = exc.response.status_code if exc.response is not None else 0
            if status == 404:
                if gone_ok:
                    return
                raise LaneGone(
                    f"lane {self.spec.name}'s pod {self.name} is gone ({what}): recover it (it is "
                    "recreated from the last fetched snapshot)"
                ) from exc
            raise BackendError(f"the cluster refused {what} for lane {self.spec.name}: {exc}") from exc
        except httpx_ws.WebSocketUpgradeError as exc:
            if exc.response.status_code == 404:
                raise LaneGone(f"lane {self.spec.name}'s pod {self.name} is gone ({what})") from exc
            raise BackendError(f"the cluster refused {what}: HTTP {exc.response.status_code}") from exc
        except UNREACHABLE_ERRORS as exc:
            raise BackendUnreachable(
                f"lane {self.spec.name} is unreachable: the cluster's API server did not answer ({what}: "
                f"{exc or type(exc).__name__}); its fetched snapshots are kept, and it resumes when the "
                "cluster answers"
            ) from exc

    async def _rest(
        self, method: str, url: str, *, body: Any = None, base: str = "", version: str = "v1", **params: str
    ) -> dict[str, Any]:
        api = await self.api()
        kwargs: dict[str, Any] = {"params": params} if params else {}
        if body is not None:
            kwargs["content"] = json.dumps(body)
            kwargs["headers"] = {"Content-Type": "application/json"}
        async with api.call_api(
            method, version=version, base=base, namespace=self.namespace, url=url, **kwargs
        ) as response:
            data: dict[str, Any] = response.json() if response.content else {}
            return data

    # --- life cycle -------------------------------------------------------------------------------

    async def _has_sandbox_crd(self) -> bool:
        if self.settings.sandbox_crd == "off":
            return False
        api = await self.api()
        try:
            async with api.call_api("GET", version="", base=f"/apis/{SANDBOX_GROUP}/{SANDBOX_VERSION}"):
                return True
        except kr8s.ServerError:
            if self.settings.sandbox_crd == "required":
                raise BackendError(
                    f"lanes.kubernetes.sandbox_crd is 'required' but the cluster has no {SANDBOX_GROUP} "
                    f"{SANDBOX_VERSION} API: install agent-sandbox, or set it to 'auto'"
                ) from None
            return False

    async def _pod(self) -> dict[str, Any] | None:
        async with self._cluster("reading the pod"):
            try:
                return await self._rest("GET", f"pods/{self.name}")
            except kr8s.ServerError as exc:
                if exc.response is not None and exc.response.status_code == 404:
                    return None
                raise

    async def create(self) -> None:
        """Create the Pod (or Sandbox), wait until it runs, check the lane out in it."""
        await self._stop_agent()
        pod = await self._pod()
        if pod is not None and _phase(pod) not in ("Failed", "Succeeded"):
            await self._wait_running()
            return
        if pod is not None:
            await self._delete()
        labels = {LABEL: _NAME_OK.sub("-", self.spec.name.lower()), REPO_LABEL: project_hash(self.spec.repo)}
        async with self._cluster("creating the lane's pod"):
            if self.settings.network_policy:
                await self._ensure_policy()
            self.uses_sandbox = await self._has_sandbox_crd()
            body = pod_spec(self.spec, self.settings, self.image, self.placement)
            if self.uses_sandbox:
                sandbox = {
                    "apiVersion": f"{SANDBOX_GROUP}/{SANDBOX_VERSION}", "kind": "Sandbox",
                    "metadata": {"name": self.name, "labels": labels},
                    "spec": {"podTemplate": {"metadata": {"labels": labels}, "spec": body}},
                }  # fmt: skip
                await self._rest("POST", "sandboxes", body=sandbox, base="/apis", version=_sandbox_path())
            else:
                manifest = {
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": self.name, "labels": labels}, "spec": body,
                }  # fmt: skip
                await self._rest("POST", "pods", body=manifest)
        try:
            await self._wait_running()
            await self._populate(with_snapshot=True)
        except BaseException:
            with contextlib.suppress(Exception):
                await self._delete()
            raise

    async def _ensure_policy(self) -> None:
        policy = {
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": POLICY_NAME},
            "spec": {
                "podSelector": {"matchExpressions": [{"key": LABEL, "operator": "Exists"}]},
                "policyTypes": ["Ingress", "Egress"],
            },
        }  # fmt: skip
        try:
            await self._rest(
                "POST", "networkpolicies", body=policy, base="/apis", version="networking.k8s.io/v1"
            )
        except kr8s.ServerError as exc:
            if exc.response is None or exc.response.status_code != 409:  # 409: it exists already
                raise

    async def _wait_running(self) -> None:
        """Watch the Pod until it runs (BackendError when it fails or start_timeout passes)."""
        api = await self.api()
        params = {"watch": "true", "fieldSelector": f"metadata.name={self.name}"}
        try:
            async with (
                asyncio.timeout(self.settings.start_timeout),
                self._cluster("waiting for the pod"),
                api.call_api(
                    "GET", url="pods", namespace=self.namespace, params=params, stream=True
                ) as response,
            ):
                async for line in response.aiter_lines():
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    pod = event.get("object", {})
                    if event.get("type") == "DELETED":
                        raise LaneGone(f"lane {self.spec.name}'s pod {self.name} was deleted while starting")
                    if _phase(pod) == "Running":
                        return
                    if _phase(pod) in ("Failed", "Succeeded"):
                        raise BackendError(f"lane {self.spec.name}'s pod {self.name} ended: {_why(pod)}")
        except TimeoutError:
            raise BackendError(
                f"lane {self.spec.name}'s pod {self.name} did not run within "
                f"{self.settings.start_timeout:g} s (lanes.kubernetes.start_timeout)"
            ) from None
        raise BackendUnreachable(f"the cluster closed the watch of lane {self.spec.name}'s pod")

    async def _delete(self) -> None:
        await self._stop_agent()
        async with self._cluster("deleting the lane's pod", gone_ok=True):
            if self.uses_sandbox:
                await self._rest("DELETE", f"sandboxes/{self.name}", base="/apis", version=_sandbox_path())
            await self._rest("DELETE", f"pods/{self.name}")

    async def health(self) -> Health:
        try:
            pod = await asyncio.wait_for(self._pod(), 15)
        except (BackendError, TimeoutError) as exc:
            return Health("unreachable", str(exc) or "the cluster did not answer in time")
        if pod is None:
            return Health("missing", f"pod {self.name} does not exist")
        if _phase(pod) == "Running":
            return Health("running", f"pod {self.namespace}/{self.name} is running")
        if _phase(pod) == "Pending":
            return Health("stopped", f"pod {self.namespace}/{self.name} is pending")
        return Health("missing", f"pod {self.namespace}/{self.name} ended: {_why(pod)}")

    async def recover(self) -> str | None:
        health = await self.health()
        if health.state == "unreachable":
            raise BackendUnreachable(health.detail)
        if health.state == "running":
            return None
        if health.state == "stopped":
            await self._wait_running()
            return None
        snap = await last_snapshot(self.spec)
        await self.create()
        where = f"its last fetched snapshot {snap[:12]}" if snap else f"its base {self.spec.base_commit[:12]}"
        return f"lane {self.spec.name}'s pod was gone ({health.detail}); recreated from {where}"

    async def destroy(self, *, force: bool = False) -> Snapshot | None:
        snap: Snapshot | None = None
        try:
            snap = await self.snapshot()
        except LaneGone:
            return None
        except BackendError:
            if not force:
                raise
        await self._delete()
        return snap

    async def close(self) -> None:
        await self._stop_agent()
        if self._api is not None:
            with contextlib.suppress(Exception):
                await self._api._session.aclose()
        self._api = None

    # --- the exec stream --------------------------------------------------------------------------

    async def _run(
        self,
        argv: Sequence[str],
        *,
        on_chunk: Chunk,
        stdin: Stdin = None,
        env: Mapping[str, str] | None = None,
    ) -> int:
        api = await self.api()
        command = ["env", *(f"{k}={v}" for k, v in (env or {}).items()), *argv]  # exec has no env field
        params = [("command", c) for c in command] + [
            ("container", "lane"), ("stdout", "true"), ("stderr", "true"),
            ("stdin", "true" if stdin is not None else "false"),
        ]  # fmt: skip
        async with self._cluster("running a command"), api.open_websocket(
            version="v1", url=f"pods/{self.name}/exec", namespace=self.namespace,
            params=params, subprotocols=list(EXEC_PROTOCOLS),
        ) as ws:  # fmt: skip
            feeder: asyncio.Task[None] | None = None
            if isinstance(stdin, bytes):
                for at in range(0, len(stdin), 1 << 20):
                    await ws.send_bytes(bytes([STDIN]) + stdin[at : at + (1 << 20)])
                if ws.subprotocol == EXEC_PROTOCOLS[0]:
                    await ws.send_bytes(bytes([CLOSE, STDIN]))
            elif stdin is not None:
                feeder = asyncio.create_task(_feed(ws, stdin))
            try:
                return await self._receive(ws, on_chunk)
            finally:
                if feeder is not None:
                    feeder.cancel()
                    with contextlib.suppress(BaseException):
                        await feeder

    async def _receive(self, ws: Any, on_chunk: Chunk) -> int:
        """Read the exec stream's channels until its status arrives; return the exit code."""
        while True:
            try:
                message = await ws.receive_bytes()
            except httpx_ws.WebSocketDisconnect as exc:
                raise BackendUnreachable(
                    f"lane {self.spec.name}'s exec stream closed before the command's status "
                    f"arrived (code {exc.code})"
                ) from exc
            if not message:
                continue
            channel, data = message[0], message[1:]
            if channel in (STDOUT, STDERR):
                if data:
                    on_chunk(channel, data)
            elif channel == STATUS:
                return _exit_code(data)


async def _feed(ws: Any, chunks: AsyncIterator[bytes]) -> None:
    """Write ``chunks`` to an exec's stdin channel as they come (a forwarded port's connection)."""
    with contextlib.suppress(Exception):
        async for chunk in chunks:
            await ws.send_bytes(bytes([STDIN]) + chunk)


def _phase(pod: dict[str, Any]) -> str:
    return str(pod.get("status", {}).get("phase", "Pending"))


def _why(pod: dict[str, Any]) -> str:
    status = pod.get("status", {})
    return str(status.get("message") or status.get("reason") or status.get("phase") or "unknown")


def _sandbox_path() -> str:
    return f"{SANDBOX_GROUP}/{SANDBOX_VERSION}"


def _exit_code(data: bytes) -> int:
    """The exit code in an exec status (``Success``, or ``NonZeroExitCode`` with an ``ExitCode`` cause)."""
    try:
        status = json.loads(data)
    except ValueError as exc:
        raise BackendError(f"the exec stream sent a status that is not JSON: {data[:200]!r}") from exc
    if status.get("status") == "Success":
        return 0
    for cause in status.get("details", {}).get("causes", []):
        if cause.get("reason") == "ExitCode":
            return int(cause.get("message", 1))
    raise BackendError(f"the command could not run: {status.get('message', status)}")
