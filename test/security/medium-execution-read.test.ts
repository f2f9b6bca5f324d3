/**
 * GET /v1/executions/{id} decides whose execution it is before fetching its history.
 * Another workspace's id (or one that exists nowhere) answers 404 after one describe, without
 * downloading a history that may be megabytes: an attacker cannot make the API read other workspaces'
 * histories, even to throw them away. Calls are counted on the API's own Temporal connection.
 */
import { expect } from 'chai';
import type { temporal } from '@temporalio/proto';
import { createWorkflow, definition, rulesStep, trigger, waitForExecution } from '../support/fixtures';
import type { TestService } from '../support/stack';
import { expectErrorOf, sharedService } from './support';

type HistoryRequest = temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryRequest;

describe('security (medium): reading an execution checks the workspace before the history @integration', () => {
  let service: TestService;
  before(async () => {
    service = await sharedService();
  });

  it("answers another workspace's execution id with 404 without fetching its history", async () => {
    const a = await service.newWorkspace(['admin']);
    const b = await service.newWorkspace(['admin']);
    const apiA = service.api(a.key);
    const executionId = await trigger(
      apiA,
      await createWorkflow(apiA, definition([rulesStep('a', [{ when: 'true', output: 1 }])])),
    );
    await waitForExecution(apiA, executionId);

    // Count the history requests for this execution on the API's connection.
    const workflowService = service.runtime.services.temporal.connection.workflowService;
    const original = workflowService.getWorkflowExecutionHistory;
    let historyFetches = 0;
    workflowService.getWorkflowExecutionHistory = ((req: HistoryRequest) => {
      if (req.execution?.workflowId === executionId) historyFetches++;
      return original.call(workflowService, req);
    }) as typeof original;
    try {
      const foreign = await service.api(b.key).get(`/v1/executions/${executionId}`);
      expectErrorOf(foreign, 404, ['execution_not_found'], "another workspace's execution");
      expect(historyFetches, "history fetches for another workspace's id").to.equal(0);

      // The counter sees the owner's read: the check above counts what it claims to.
      await apiA.get(`/v1/executions/${executionId}`).expect(200);
      expect(historyFetches, "history fetches for the owner's read").to.be.greaterThan(0);
    } finally {
      workflowService.getWorkflowExecutionHistory = original;
    }
  });
});
