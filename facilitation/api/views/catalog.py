"""Agents, personas and roles: GET/POST /api/{kind} and GET/PATCH/DELETE /api/{kind}/{id}.

Everyone sees the built-in presets; custom rows are visible to and changeable by
their creator (and staff) only. Built-ins are read-only: 403 on PATCH and DELETE.
"""
from contextlib import contextmanager

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from facilitation.actions.inputs import flat_errors, type_headline
from facilitation.api import inputs, schemas
from facilitation.api.envelope import ok
from facilitation.api.pagination import paginate
from facilitation.api.parsing import bool_param, json_body, safe_text
from facilitation.api.permissions import catalog_row
from rooms.actions import catalog as actions
from rooms.errors import ValidationFailed
from rooms.models import Agent, Persona, Role
from rooms.queries import usable_by



def _parse(serializer_class, request, partial: bool) -> dict:
    serializer = serializer_class(data=json_body(request), partial=partial)
    if not serializer.is_valid():
        # One key per field, as the discussions name theirs: ``expertise[2]`` for a list's third item.
        errors = flat_errors(serializer.errors)
        raise ValidationFailed(type_headline(errors) or "The request is not valid.", errors)
    if hasattr(serializer, "to_action"):
        return serializer.to_action()
    return dict(serializer.validated_data)


@contextmanager
def _named_as_in(input_class):
    """An action's validation errors keyed as the request body names its fields."""
    try:
        yield
    except ValidationFailed as exc:
        rename = getattr(input_class, "api_errors", None)
        if rename is None:
            raise
        raise ValidationFailed(exc.message, rename(exc.details), code=exc.code) from None


class _CatalogList(APIView):
    """Built-in presets and your own custom rows; create custom ones."""

    model = None
    what = ""
    input_class = None
    shape = None
    filters: tuple[tuple[str, str], ...] = ()  # (query name, model field) boolean filters
    # (query name, model lookup) text filters: a value names one row (or an alias's older duplicates); an
    # empty value names none and is 400, as no key or alias is empty.
    exact_filters: tuple[tuple[str, str], ...] = ()

    def get(self, request):
        qs = usable_by(self.model, request.user)
        for param, field in self.filters:
            value = bool_param(request, param)
            if value is not None:
                qs = qs.filter(**{field: value})
        for param, field in self.exact_filters:
            value = request.query_params.get(param)
            if value is None:
                continue
            if not value.strip():
                raise ValidationFailed(f"{param} is empty.", {param: [f"Name the {param} to look up."]})
            qs = qs.filter(**{field: safe_text(value, param)})
        qs = qs.select_related(*self.related) if getattr(self, "related", None) else qs
        rows, meta = paginate(request, qs.order_by(*self.model._meta.ordering, "id"))
        return ok([self.shape(r) for r in rows], meta=meta)

    def post(self, request):
        fields = _parse(self.input_class, request, partial=False)
        with _named_as_in(self.input_class):
            row = self.create(request.user, fields)
        return ok(self.shape(row), status=201)


class _CatalogDetail(APIView):
    """One built-in or custom row; only custom ones change (built-ins: 403)."""

    patch_is_partial = True  # PATCH sends only the fields that change (the schema requires none)
    model = None
    what = ""
    input_class = None
    shape = None

    def get(self, request, id: int):
        return ok(self.shape(catalog_row(self.model, request.user, id, self.what)))

    def patch(self, request, id: int):
        row = catalog_row(self.model, request.user, id, self.what)
        actions.require_custom(row, self.what)  # a built-in's 403 whatever the body says
        fields = _parse(self.input_class, request, partial=True)
        with _named_as_in(self.input_class):
            row = self.update(row, request.user, fields)
        return ok(self.shape(row))

    def delete(self, request, id: int):
        row = catalog_row(self.model, request.user, id, self.what)
        self.remove(row, request.user)
        return ok({"id": id, "deleted": True})


def _schema_for(list_cls, detail_cls, *, tag: str, plural: str, out, input_class, filters=(), exact=()):
    """Attach the OpenAPI description to a list/detail pair."""
    one = schemas.envelope(f"{out.__name__[:-3]}Envelope", out())
    many = schemas.envelope(f"{out.__name__[:-3]}ListEnvelope", out(many=True), schemas.PageMetaOut())
    deleted = schemas.envelope(f"{out.__name__[:-3]}DeletedEnvelope", schemas.DeletedOut())
    params = ([OpenApiParameter(name, bool, description=text) for name, text in filters]
              + [OpenApiParameter(name, {"type": "string", "minLength": 1}, description=text) for name, text in exact]
              + schemas.PAGE_PARAMS)

    def wrap(cls, method, **kw):
        original = getattr(cls, method)

        def view(self, request, *args, **kwargs):
            return original(self, request, *args, **kwargs)

        setattr(cls, method, extend_schema(tags=[tag], **kw)(view))

    wrap(list_cls, "get", operation_id=f"{plural}_list", summary=f"List {plural}", parameters=params,
         responses=schemas.responses({200: many}, 400))
    wrap(list_cls, "post", operation_id=f"{plural}_create", summary=f"Create a custom {tag}", request=input_class,
         responses=schemas.responses({201: one}, 400, 415))
    wrap(detail_cls, "get", operation_id=f"{plural}_retrieve", summary=f"One {tag}",
         responses=schemas.responses({200: one}))
    wrap(detail_cls, "patch", operation_id=f"{plural}_update", summary=f"Update a custom {tag} (built-ins: 403)",
         request=input_class, responses=schemas.responses({200: one}, 400, 403, 409, 415))
    wrap(detail_cls, "delete", operation_id=f"{plural}_destroy", summary=f"Delete a custom {tag} (built-ins: 403)",
         description="409 while it is still in use.", responses=schemas.responses({200: deleted}, 403, 409))


# --- agents ---------------------------------------------------------------------------

class AgentListView(_CatalogList):
    model, what, input_class, related = Agent, "agent", inputs.AgentIn, ("role", "persona", "created_by")
    shape = staticmethod(schemas.AgentOut.render)
    filters = (("isFacilitator", "is_facilitator"), ("builtin", "is_builtin"))
    exact_filters = (("alias", "alias__iexact"),)  # compared without case, as @mentions and the uniqueness rule are

    def create(self, user, fields):
        return actions.do_create_agent(user, **fields)


class AgentDetailView(_CatalogDetail):
    model, what, input_class = Agent, "agent", inputs.AgentIn
    shape = staticmethod(schemas.AgentOut.render)

    def update(self, row, user, fields):
        return actions.do_update_agent(row, user, **fields)

    def remove(self, row, user):
        actions.do_delete_agent(row, actor=user)


_schema_for(AgentListView, AgentDetailView, tag="agent", plural="agents", out=schemas.AgentOut,
            input_class=inputs.AgentIn,
            filters=[("isFacilitator", "Only facilitators (true) or only non-facilitators (false)."),
                     ("builtin", "Only built-in presets (true) or only custom agents (false).")],
            exact=[("alias", "Only the agent(s) with this alias, compared without case (ARCHITECT finds architect), "
                             "built-ins first, e.g. impartial-chair or architect. Empty: 400.")])


# --- personas ---------------------------------------------------------------------------

class PersonaListView(_CatalogList):
    model, what, input_class = Persona, "persona", inputs.PersonaIn
    shape = staticmethod(schemas.PersonaOut.render)
    filters = (("isFacilitator", "is_facilitator"), ("builtin", "is_builtin"))
    exact_filters = (("key", "key"),)

    def create(self, user, fields):
        return actions.do_create_persona(user, **fields)


class PersonaDetailView(_CatalogDetail):
    model, what, input_class = Persona, "persona", inputs.PersonaIn
    shape = staticmethod(schemas.PersonaOut.render)

    def update(self, row, user, fields):
        return actions.do_update_persona(row, actor=user, **fields)

    def remove(self, row, user):
        actions.do_delete_persona(row, actor=user)


_schema_for(PersonaListView, PersonaDetailView, tag="persona", plural="personas", out=schemas.PersonaOut,
            input_class=inputs.PersonaIn,
            filters=[("isFacilitator", "Only facilitator personas (true) or the others (false)."),
                     ("builtin", "Only built-in presets (true) or only custom personas (false).")],
            exact=[("key", "Only the persona with this key. Empty: 400.")])


# --- roles ------------------------------------------------------------------------------

class RoleListView(_CatalogList):
    model, what, input_class = Role, "role", inputs.RoleIn
    shape = staticmethod(schemas.RoleOut.render)
    filters = (("builtin", "is_builtin"),)
    exact_filters = (("key", "key"),)

    def create(self, user, fields):
        return actions.do_create_role(user, **fields)


class RoleDetailView(_CatalogDetail):
    model, what, input_class = Role, "role", inputs.RoleIn
    shape = staticmethod(schemas.RoleOut.render)

    def update(self, row, user, fields):
        return actions.do_update_role(row, actor=user, **fields)

    def remove(self, row, user):
        actions.do_delete_role(row, actor=user)


_schema_for(RoleListView, RoleDetailView, tag="role", plural="roles", out=schemas.RoleOut, input_class=inputs.RoleIn,
            filters=[("builtin", "Only built-in roles (true) or only custom roles (false).")],
            exact=[("key", "Only the role with this key. Empty: 400.")])
